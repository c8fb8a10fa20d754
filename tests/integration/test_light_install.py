"""The base install is a producer: a wheel built from this tree, in a fresh venv with no extras,
enqueues without Celery, and a real worker answers the job. The wheel holds one top-level
package, ``tersify``, so a user's own ``producer.py`` or ``worker.py`` shadows nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tersify.contract import Method, SummaryResult
from tersify.settings import Settings
from tersify.worker.processes.worker_process import WorkerProcess

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("celery", "kombu", "httpx", "fastapi", "uvicorn", "rich", "prometheus_client", "mcp")
SUBMIT = """
import json, sys
from tersify import Producer, Settings

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
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from this tree."""
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
    (built,) = wheels.glob("tersify-*.whl")
    return built


@pytest.fixture(scope="module")
def light_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel built from this tree, installed without extras."""
    venv = tmp_path_factory.mktemp("light") / "venv"
    run(sys.executable, "-m", "venv", venv)
    run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", wheel)
    return venv


# What a backend's own modules of these names might do when imported by mistake.
HOSTILE_MODULE = 'raise ImportError("this is the application\'s own {name}.py")\n'


def test_the_wheel_puts_only_tersify_into_site_packages(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
    assert {t for t in tops if not t.endswith((".dist-info", ".data"))} == {"tersify"}
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {"tersify/__init__.py", "tersify/worker/__init__.py", "tersify/py.typed"} <= names


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
    assert worker.returncode == 2
    assert worker.stderr == (
        "tersify worker: needs celery, from the worker extra: pip install -e '.[worker]' in a "
        "tersify checkout, or pip install 'dist/tersify-0.1.0-py3-none-any.whl[worker]' with a "
        "wheel built there (README: Install)\n"
    )
    proxy = subprocess.run(
        [tersify, "mcp-proxy", "--", "true"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proxy.returncode == 2
    assert "from the mcp extra: pip install -e '.[mcp]'" in proxy.stderr
    assert "pip install 'tersify[" not in worker.stderr + proxy.stderr  # no index release


@pytest.mark.timeout(900)
def test_modules_named_producer_and_worker_beside_the_caller_break_neither_side(
    light_venv: Path, settings: Settings, tmp_path: Path
) -> None:

    app = tmp_path / "app"
    app.mkdir()
    for name in ("producer", "worker"):  # first on sys.path: the script's folder, the cwd
        (app / f"{name}.py").write_text(HOSTILE_MODULE.format(name=name))
    # `python -m tersify.worker.cli` in the app's folder: its own modules come first on the path
    worker = WorkerProcess(settings, tmp_path, cwd=app, session_log_dir=str(tmp_path / "logs"))
    try:
        worker.start()
        script = app / "submit.py"
        script.write_text(SUBMIT)
        answered = run(light_venv / "bin" / "python", script, settings.redis_url, cwd=app)
    finally:
        worker.stop()
    result = SummaryResult.model_validate(json.loads(answered.stdout))
    assert result.method is Method.EXTRACTIVE
