"""Long text inside a tool's structured content: found, replaced by summaries, schema kept.

The official SDK's servers answer a tool that returns ``str`` with ``{"result": TEXT}`` as
structured content and the same text as a text block; a tool returning a model or a dict sends
the object, and its JSON as the text block. The proxy summarizes the long string leaves of that
object and mirrors the change in the text blocks that repeat it, so both stay one answer. A
replacement that would break the tool's declared output schema (a ``pattern``, an ``enum``) is
dropped: the agent's client validates structured content against that schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Final

import mcp.types as types

Path = tuple[str | int, ...]

MAX_LEAVES: Final = 8
"""Most string leaves of one result summarized (the longest first); the rest stay as sent."""

_MAX_NODES: Final = 100_000
_MAX_DEPTH: Final = 64


def long_leaves(value: object, threshold: int) -> dict[Path, str]:
    """The string leaves of ``value`` longer than ``threshold`` chars, the longest first (at most
    ``MAX_LEAVES``), by their path of keys and indices."""
    found = [(path, text) for path, text in _leaves(value) if len(text) > threshold]
    found.sort(key=lambda leaf: -len(leaf[1]))
    return dict(found[:MAX_LEAVES])


def replaced(value: Any, replacements: Mapping[Path, str]) -> Any:
    """A copy of ``value`` with the leaves at ``replacements``' paths replaced."""
    for path, text in replacements.items():
        value = _set(value, path, text)
    return value


def schema_errors(schema: dict[str, Any] | None, value: object) -> set[Path]:
    """The paths at which ``value`` breaks ``schema`` (none: it is valid, or there is no
    schema); the root's path is ``()``."""
    if schema is None:
        return set()
    from jsonschema.validators import validator_for

    validator = validator_for(schema)(schema)
    return {tuple(error.absolute_path) for error in validator.iter_errors(value)}


def schema_kept(
    schema: dict[str, Any] | None, value: object, replacements: dict[Path, str]
) -> dict[Path, str]:
    """The replacements that keep ``value`` valid under ``schema``: each one the validator
    blames is dropped; none at all when the rest still break it."""
    bad = schema_errors(schema, replaced(value, replacements))
    kept = {path: text for path, text in replacements.items() if path not in bad}
    if kept and schema_errors(schema, replaced(value, kept)):
        return {}
    return kept


def mirrored(
    content: list[types.ContentBlock],
    before: object,
    after: object,
    replacements: Mapping[Path, str],
    originals: Mapping[Path, str],
) -> list[types.ContentBlock]:
    """The text blocks that repeat the structured content, rewritten to match ``after``: a block
    holding a replaced leaf's text gets its replacement; a block holding ``before`` as JSON
    gets ``after`` as JSON. Every other block stays as sent."""
    by_text = {originals[path]: text for path, text in replacements.items()}
    blocks: list[types.ContentBlock] = []
    for block in content:
        if isinstance(block, types.TextContent):
            if block.text in by_text:
                block = block.model_copy(update={"text": by_text[block.text]})
            elif _is_json_of(block.text, before):
                text = json.dumps(after, indent=2, ensure_ascii=False)
                block = block.model_copy(update={"text": text})
        blocks.append(block)
    return blocks


def _is_json_of(text: str, value: object) -> bool:
    if not text.lstrip().startswith(("{", "[")):
        return False
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def _leaves(value: object) -> Iterator[tuple[Path, str]]:
    """Every string leaf with its path, depth-first (bounded in depth and in nodes)."""
    stack: list[tuple[Path, object]] = [((), value)]
    for _ in range(_MAX_NODES):
        if not stack:
            return
        path, node = stack.pop()
        if isinstance(node, str):
            yield path, node
        elif len(path) < _MAX_DEPTH and isinstance(node, dict):
            stack.extend(((*path, key), child) for key, child in node.items())
        elif len(path) < _MAX_DEPTH and isinstance(node, list):
            stack.extend(((*path, index), child) for index, child in enumerate(node))


def _set(node: Any, path: Path, text: str) -> Any:
    """A copy of ``node`` with ``text`` at ``path`` (only the containers on the path copied)."""
    if not path:
        return text
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {**node, head: _set(node[head], rest, text)}
    assert isinstance(node, list) and isinstance(head, int)  # paths come from _leaves
    return [*node[:head], _set(node[head], rest, text), *node[head + 1 :]]
