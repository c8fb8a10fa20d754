"""The distribution's one import name, ``tersify``, covers every package folder of the tree."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOMES = {"tersify": ROOT / "producer", "tersify.worker": ROOT / "worker"}


def _tree_packages() -> set[str]:
    found: set[str] = set()
    for name, home in HOMES.items():
        for folder in [home, *(p for p in home.rglob("*") if p.is_dir())]:
            if "__pycache__" in folder.parts:
                continue
            parts = folder.relative_to(home).parts
            if name == "tersify" and parts[:1] == ("worker",):
                continue
            found.add(".".join([name, *parts]))
    return found


def test_every_folder_of_producer_and_worker_is_a_listed_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config["tool"]["setuptools"]
    assert setuptools["package-dir"] == {"tersify": "producer", "tersify.worker": "worker"}
    assert set(setuptools["packages"]) == _tree_packages()


def test_the_public_names_come_from_tersify_itself() -> None:
    import tersify

    assert {"Producer", "AsyncProducer", "Settings", "SummaryResult"} <= set(tersify.__all__)
    assert tersify.Producer.__module__ == "tersify.client.sync"
    assert Path(tersify.__file__).parent == ROOT / "producer"
