"""``python -m worker.cli``: the ``tersify`` command line."""

from tersify.worker.cli import main

raise SystemExit(main())
