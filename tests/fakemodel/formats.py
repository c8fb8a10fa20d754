"""Structured answers in the fake: what each API accepts of them, and what it answers.

Anthropic: ``tools`` (custom tools: a name matching ``^[a-zA-Z0-9_-]{1,128}$``, an object
``input_schema``), ``tool_choice`` (``auto``, ``any``, ``tool`` naming an offered tool, ``none``;
only with tools), and the turns around a tool call (every ``tool_use`` answered by a
``tool_result`` first in the next user message, every ``tool_result`` answering one; no empty
message but a final assistant one). A forced tool (``tool`` or ``any``) is answered by a
``tool_use`` block.

OpenAI: ``response_format`` of type ``text``, ``json_object`` (the messages must say "json") or
``json_schema`` (a name matching ``^[a-zA-Z0-9_-]{1,64}$``; with ``strict``, an object schema
whose every object is closed by ``additionalProperties: false`` and requires every property).
A JSON format is answered by JSON content.

The answer's value: a JSON object given as the text is used as is; any other text becomes the
schema's shape with the text as its first string property (``[]`` for arrays, ``false``,
``0``), so the default answer fits whatever schema a request sends.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")
_SCHEMA_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_CHOICES = ("auto", "any", "tool", "none")


def anthropic_tools_problem(body: dict[str, Any]) -> str | None:
    """Why the Messages API would refuse the request's ``tools``/``tool_choice``; None if not."""
    tools, choice = body.get("tools"), body.get("tool_choice")
    if tools is None:
        return None if choice is None else "tool_choice: may only be specified with tools"
    if not isinstance(tools, list):
        return "tools: Input should be a valid list"
    names: list[str] = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            return f"tools.{index}: Input should be a valid dictionary"
        if tool.get("type") not in (None, "custom"):
            continue  # the API's own server tools are not modelled
        name, schema = tool.get("name"), tool.get("input_schema")
        if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
            return (
                f"tools.{index}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
            )
        if not isinstance(schema, dict):
            return f"tools.{index}.custom.input_schema: Field required"
        if schema.get("type") != "object":
            return f"tools.{index}.custom.input_schema.type: Input should be 'object'"
        if name in names:
            return "tools: Tool names must be unique."
        names.append(name)
    if choice is None:
        return None
    if not isinstance(choice, dict) or choice.get("type") not in _CHOICES:
        return "tool_choice: Input tag does not match any of the expected tags: " + ", ".join(
            repr(c) for c in _CHOICES
        )
    if choice["type"] == "tool" and choice.get("name") not in names:
        return f"tool_choice: Tool '{choice.get('name')}' not found in provided tools"
    return None


def anthropic_turns_problem(messages: list[Any]) -> str | None:
    """Why the Messages API would refuse these turns (roles, empty ones, unpaired tool calls)."""
    if not messages:
        return "messages: at least one message is required"
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return f"messages.{index}.role: Input should be 'user' or 'assistant'"
        last = index == len(messages) - 1
        if not _has_content(message.get("content")) and not (
            last and message["role"] == "assistant"
        ):
            return (
                f"messages.{index}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        problem = _unanswered_calls(messages, index) or _unasked_results(messages, index)
        if problem:
            return problem
    return None


def _blocks(message: Any, kind: str) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind]


def _has_content(content: Any) -> bool:
    if isinstance(content, str):
        return bool(content.strip())
    if not isinstance(content, list) or not content:
        return False
    texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return all(isinstance(t, str) and t.strip() for t in texts)


def _unanswered_calls(messages: list[Any], index: int) -> str | None:
    """A ``tool_use`` whose id the next message does not answer first with a ``tool_result``."""
    calls = _blocks(messages[index], "tool_use")
    if not calls or messages[index].get("role") != "assistant" or index == len(messages) - 1:
        return None
    for call in calls:
        if not isinstance(call.get("id"), str) or not isinstance(call.get("input"), dict):
            return f"messages.{index}: a tool_use block needs an id, a name and an input object"
    ids = [call["id"] for call in calls]
    content = messages[index + 1].get("content")
    leading: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not (isinstance(block, dict) and block.get("type") == "tool_result"):
            break
        leading.append(block.get("tool_use_id"))
    missing = [i for i in ids if i not in leading]
    if missing:
        return (
            f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
            f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
            "corresponding `tool_result` block in the next message."
        )
    return None


def _unasked_results(messages: list[Any], index: int) -> str | None:
    """A ``tool_result`` answering no ``tool_use`` of the message before it."""
    results = _blocks(messages[index], "tool_result")
    before = messages[index - 1] if index > 0 else None
    asked = {call.get("id") for call in _blocks(before, "tool_use")}
    for result in results:
        if result.get("tool_use_id") not in asked:
            return (
                f"messages.{index}: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{result.get('tool_use_id')}. Each `tool_result` block must have a "
                "corresponding `tool_use` block in the previous message."
            )
    return None


def forced_tool(body: dict[str, Any]) -> dict[str, Any] | None:
    """The tool a Messages request forces the model to call (``tool`` or ``any``), if one."""
    choice, tools = body.get("tool_choice"), body.get("tools") or []
    if not isinstance(choice, dict) or not tools:
        return None
    if choice.get("type") == "tool":
        return next((t for t in tools if t.get("name") == choice.get("name")), None)
    first: dict[str, Any] = tools[0]
    return first if choice.get("type") == "any" else None


def openai_format(body: dict[str, Any]) -> tuple[bool, Any]:
    """Whether a Chat Completions request asks for JSON, and the schema it gives (or None)."""
    fmt = body.get("response_format")
    if not isinstance(fmt, dict) or fmt.get("type") not in ("json_object", "json_schema"):
        return False, None
    spec = fmt.get("json_schema")
    return True, spec.get("schema") if isinstance(spec, dict) else None


def openai_format_problem(body: dict[str, Any]) -> str | None:
    """Why Chat Completions would refuse the request's ``response_format``; None if not."""
    fmt = body.get("response_format")
    if fmt is None:
        return None
    if not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object", "json_schema"):
        return (
            "Invalid value for 'response_format.type': expected one of 'text', 'json_object' "
            "or 'json_schema'."
        )
    if fmt["type"] == "json_object" and "json" not in json.dumps(body["messages"]).lower():
        return (
            "'messages' must contain the word 'json' in some form, to use 'response_format' "
            "of type 'json_object'."
        )
    if fmt["type"] != "json_schema":
        return None
    spec = fmt.get("json_schema")
    if not isinstance(spec, dict):
        return "Missing required parameter: 'response_format.json_schema'."
    name = spec.get("name")
    if not isinstance(name, str) or not _SCHEMA_NAME.fullmatch(name):
        return "Invalid 'response_format.json_schema.name': string does not match pattern."
    schema = spec.get("schema")
    if schema is not None and not isinstance(schema, dict):
        return "Invalid type for 'response_format.json_schema.schema': expected an object."
    if spec.get("strict") and isinstance(schema, dict):
        if schema.get("type") != "object":
            return f"Invalid schema for response_format '{name}': schema must be of type object."
        found = _strict_problem(schema, ())
        return f"Invalid schema for response_format '{name}': {found}" if found else None
    return None


def _strict_problem(schema: Any, context: tuple[str, ...]) -> str | None:
    """Where a strict schema leaves an object open or a property optional; None if nowhere."""
    if not isinstance(schema, dict):
        return None
    where = f"In context={context!r}"
    properties = schema.get("properties")
    if schema.get("type") == "object" or isinstance(properties, dict):
        if schema.get("additionalProperties") is not False:
            return f"{where}, 'additionalProperties' is required to be supplied and to be false."
        keys = list(properties or {})
        missing = [key for key in keys if key not in (schema.get("required") or [])]
        if missing:
            return (
                f"{where}, 'required' is required to be supplied and to be an array including "
                f"every key in properties. Missing '{missing[0]}'."
            )
    children: list[tuple[tuple[str, ...], Any]] = [
        ((*context, "properties", key), value) for key, value in (properties or {}).items()
    ]
    children.append(((*context, "items"), schema.get("items")))
    for key in ("anyOf", "$defs"):
        members = schema.get(key)
        if isinstance(members, list):
            children.extend(((*context, key, str(i)), m) for i, m in enumerate(members))
        elif isinstance(members, dict):
            children.extend(((*context, key, k), m) for k, m in members.items())
    for path, child in children:
        found = _strict_problem(child, path)
        if found:
            return found
    return None


def structured_value(text: str, schema: Any, *, given: bool) -> Any:
    """The JSON value a structured answer carries: ``text`` parsed when it is JSON (an object,
    or anything when ``given``), else the schema's shape with ``text`` as its first string."""
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    else:
        if given or isinstance(parsed, dict):
            return parsed
    if given:
        return text
    filled = _shape(schema, [text], schema)
    return filled if isinstance(filled, dict) else {"text": text}


def _shape(schema: Any, text: list[str], root: Any) -> Any:
    """The smallest value of ``schema``'s type, the first string taking ``text`` (used up);
    ``$ref``s point into ``root``'s ``$defs`` (as the SDKs' generated schemas do)."""
    if not isinstance(schema, dict):
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and isinstance(root, dict):
        return _shape((root.get("$defs") or {}).get(ref.removeprefix("#/$defs/")), text, root)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        wanted = schema.get("required") or list(properties)
        return {key: _shape(properties.get(key), text, root) for key in wanted}
    if kind == "string":
        return text.pop() if text else ""
    defaults: dict[Any, Any] = {"array": [], "boolean": False, "integer": 0, "number": 0}
    return defaults.get(kind)
