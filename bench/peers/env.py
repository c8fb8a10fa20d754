"""The arq and Dramatiq peers' own interpreter: ``.venv-peers`` under the repository root.

arq needs redis-py < 6 and tersify needs 6.x, so the peers cannot share ``.venv``. This module
holds the one list of pinned peer packages; ``make bench-peers`` and ``bench/throughput.py`` both
create the env through ``ensure_peer_python``. Run: ``.venv/bin/python bench/peers/env.py``.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
import time
from pathlib import Path

PACKAGES = (
    "arq==0.28.0",
    "dramatiq[redis]==2.2.1",
    "gevent==26.9.0",
    "httpx==0.28.1",
    "redis==5.3.1",
)
VENV_DIR = ".venv-peers"
# Written last and holding the package list: a half-made env or an older list reinstalls.
MARKER = ".installed"
INSTALL_TIMEOUT_SECONDS = 600.0


def peer_python_path(root: Path) -> Path:
    """Where the peer interpreter lives under ``root``."""
    return root / VENV_DIR / "bin" / "python"


def _ready(venv: Path) -> bool:
    marker = venv / MARKER
    return (
        (venv / "bin" / "python").exists()
        and marker.exists()
        and (marker.read_text().split() == list(PACKAGES))
    )


def _run(args: list[str], deadline: float) -> None:
    """Run one install step within what is left of the time budget; raise with its output."""
    try:
        done = subprocess.run(
            args,
            capture_output=True,
            text=True,
            timeout=max(1.0, deadline - time.monotonic()),
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"{' '.join(args[:4])} timed out") from exc
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-3000:]
        raise RuntimeError(f"{' '.join(args[:4])} failed ({done.returncode}):\n{tail}")


def ensure_peer_python(root: Path, install: bool) -> str | None:
    """The peer interpreter, creating its env first when ``install``; None when it is absent."""
    venv = root / VENV_DIR
    python = peer_python_path(root)
    if _ready(venv):
        return str(python)
    if not install:
        return None
    venv.mkdir(exist_ok=True)
    # Two benchmarks started together must not both pip-install into the same env.
    with (venv / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _ready(venv):
            return str(python)
        print(f"creating {venv} for the arq and Dramatiq peers: {' '.join(PACKAGES)}", flush=True)
        deadline = time.monotonic() + INSTALL_TIMEOUT_SECONDS
        _run([sys.executable, "-m", "venv", str(venv)], deadline)
        _run([str(python), "-m", "pip", "install", "--quiet", *PACKAGES], deadline)
        (venv / MARKER).write_text("\n".join(PACKAGES) + "\n")
    return str(python)


if __name__ == "__main__":
    print(ensure_peer_python(Path(__file__).resolve().parents[2], install=True))
