"""docs/CONFIGURATION.md's table matches ``Settings`` exactly: every variable, its default."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import SecretStr

from tersify.settings import ProviderName, Settings

ROOT = Path(__file__).resolve().parents[2]


def expected_rows() -> dict[str, str]:
    """``TERSIFY_NAME`` → the default as docs/CONFIGURATION.md spells it."""
    rows = {}
    for name, field in Settings.model_fields.items():
        default = field.default
        if default is None:
            shown = "(unset)"
        elif isinstance(default, SecretStr):
            shown = "(secret)"
        elif isinstance(default, bool):
            shown = str(default).lower()
        elif isinstance(default, ProviderName):
            shown = default.value
        else:
            shown = str(default)
        rows[f"TERSIFY_{name.upper()}"] = shown
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
    assert all(field.description for field in Settings.model_fields.values())


if __name__ == "__main__":  # prints the table for docs/CONFIGURATION.md
    for env, default in expected_rows().items():
        desc = Settings.model_fields[env.removeprefix("TERSIFY_").lower()].description
        print(f"| `{env}` | `{default}` | {desc} |")
