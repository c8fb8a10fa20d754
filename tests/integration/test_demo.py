"""``tersify demo`` — the README's first command — runs end to end on a fresh private Redis."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from tersify.contract import ToolType
from tersify.settings import Settings


def test_the_demo_summarizes_one_output_of_every_tool_type_and_cleans_up(tmp_path: Path) -> None:
    env = Settings().child_env(session_log_dir=str(tmp_path / "sessions"))
    for name in ("TERSIFY_REDIS_URL", "TERSIFY_ANTHROPIC_API_KEY", "TERSIFY_OPENAI_API_KEY"):
        env.pop(name, None)  # the embedded default: a private Redis and the extractive provider
    env["COLUMNS"] = "200"
    done = subprocess.run(
        [sys.executable, "-m", "tersify.worker.cli", "demo", "--timeout", "60"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for kind in ToolType:
        assert f"{kind.value} " in done.stdout
    assert done.stdout.count("extractive") >= len(ToolType)
    assert "6 outputs" in done.stdout
    logs = list((tmp_path / "sessions").glob("*.jsonl"))
    assert [p.name for p in logs] == ["demo.jsonl"]
    url = re.search(r"private redis-server on (redis://\S+)", done.stdout)
    assert url is not None
    with pytest.raises(redis.ConnectionError):  # the demo stopped the Redis it started
        redis.Redis.from_url(url.group(1), socket_connect_timeout=1).ping()
