"""docs/CONFIGURATION.md's table matches the settings exactly: every variable, its default
(``Settings``' own and each provider's section)."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import SecretStr

from tersify.worker.model.providers.registry import setting_fields

ROOT = Path(__file__).resolve().parents[2]


def expected_rows() -> dict[str, str]:
    """``TERSIFY_NAME`` → the default as docs/CONFIGURATION.md spells it."""
    rows = {}
    for name, field in setting_fields().items():
        default = field.default
        if default is None:
            shown = "(unset)"
        elif isinstance(default, SecretStr):
            shown = "(secret)"
        elif isinstance(default, bool):
            shown = str(default).lower()
        else:
            shown = str(default)
        rows[name] = shown
    return rows


def documented_rows() -> dict[str, str]:
    text = (ROOT / "docs" / "CONFIGURATION.md").read_text(encoding="utf-8")
    pattern = re.compile(r"^\| `(TERSIFY_[A-Z0-9_]+)` \| `?([^`|]*?)`? \|", re.MULTILINE)
    return {m.group(1): m.group(2).strip() for m in pattern.finditer(text)}


def test_the_configuration_table_lists_every_setting_with_its_default() -> None:
    assert documented_rows() == expected_rows()


def test_the_readme_links_the_configuration_table_instead_of_repeating_it() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/CONFIGURATION.md" in readme
    assert "| `TERSIFY_" not in readme


def test_every_setting_has_a_description() -> None:
    assert all(field.description for field in setting_fields().values())


if __name__ == "__main__":  # prints the table for docs/CONFIGURATION.md
    for env, default in expected_rows().items():
        desc = setting_fields()[env].description
        print(f"| `{env}` | `{default}` | {desc} |")
