"""``python -m worker.cli``: the ``tersify`` command line."""

from worker.cli import main

raise SystemExit(main())
