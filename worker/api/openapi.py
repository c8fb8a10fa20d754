"""``docs/openapi.json``: the API's OpenAPI document, generated from the routes and the contract.

Run ``python -m tersify.worker.api.openapi`` to rewrite it; a test fails when the file is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from tersify.settings import Settings
from tersify.worker.api.app import create_app

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def document() -> dict[str, Any]:
    """The OpenAPI document as served (built from default settings with a placeholder token)."""
    settings = Settings(api_tokens=SecretStr("placeholder"))
    return create_app(settings).openapi()


def render() -> str:
    """The document as committed: sorted keys, two-space indent, a final newline."""
    return json.dumps(document(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> int:
    """Write ``docs/openapi.json``."""
    DOCUMENT.write_text(render(), encoding="utf-8")
    print(f"wrote {DOCUMENT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
