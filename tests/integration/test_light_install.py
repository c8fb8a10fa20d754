"""The base install is a producer: a wheel built from this tree, in a fresh venv with no extras,
enqueues without Celery, and a real worker answers the job."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from producer.contract import Method, SummaryResult
from producer.settings import Settings
from worker.processes.worker_process import WorkerProcess

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("celery", "kombu", "httpx", "fastapi", "uvicorn", "rich", "prometheus_client", "mcp")
SUBMIT = """
import json, sys
from producer.client import Producer
from producer.settings import Settings

output = "".join(f"{i:04d} step {i} finished with warnings\\n" for i in range(400))
with Producer(Settings(redis_url=sys.argv[1])) as producer:
    handle = producer.submit(session_id="light", tool_name="bash", output=output)
    print(handle.wait(60).model_dump_json())
"""


def run(*argv: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command to its end (bounded), failing the test with its output if it fails."""
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=400, check=False
    )
    assert done.returncode == 0, f"{argv}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    return done


@pytest.fixture(scope="module")
def light_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel built from this tree, installed without extras."""
    base = tmp_path_factory.mktemp("light")
    source = base / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in ("producer", "worker"):
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    wheels = base / "wheels"
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "-w",
        wheels,
        source,
    )
    (wheel,) = wheels.glob("tersify-*.whl")
    venv = base / "venv"
    run(sys.executable, "-m", "venv", venv)
    run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", wheel)
    return venv


@pytest.mark.timeout(900)
def test_a_base_install_has_no_celery_and_enqueues_for_a_real_worker(
    light_venv: Path, settings: Settings, start_worker: Callable[..., WorkerProcess]
) -> None:
    python = light_venv / "bin" / "python"
    found = run(
        python, "-c", f"import importlib.util as u; print([m for m in {HEAVY!r} if u.find_spec(m)])"
    )
    assert found.stdout.strip() == "[]"
    start_worker()  # the full install's worker takes what the light producer enqueued
    answered = run(python, "-c", SUBMIT, settings.redis_url)
    result = SummaryResult.model_validate(json.loads(answered.stdout))
    assert result.method is Method.EXTRACTIVE
    assert result.output_ref is not None


@pytest.mark.timeout(900)
def test_a_base_install_runs_tersify_submit_and_names_the_extra_a_worker_needs(
    light_venv: Path, settings: Settings
) -> None:
    tersify = light_venv / "bin" / "tersify"
    env = settings.child_env(redis_url=settings.redis_url)
    short = subprocess.run(
        [tersify, "submit", "-", "--tool", "bash", "--json"],
        input="ok\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert short.returncode == 0, short.stderr
    assert json.loads(short.stdout)["method"] == "passthrough"
    worker = subprocess.run(
        [tersify, "worker"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert worker.returncode == 1
    assert "pip install 'tersify[worker" in worker.stderr
