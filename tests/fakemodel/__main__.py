"""``python -m tests.fakemodel --port 8099 --latency-ms 200``: serve until Ctrl-C."""

from __future__ import annotations

import argparse
import contextlib
import threading

from tests.fakemodel.server import FakeModelServer


def main(argv: list[str] | None = None) -> None:
    """Serve until interrupted (for benchmarks and manual runs)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=8099)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args(argv)
    with FakeModelServer(args.port, latency=args.latency_ms / 1000) as server:
        print(f"fake model server on {server.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
