"""What a rule's match must also be to count as a secret, and how far the secret reaches.

Each check takes the text and the span a rule matched, and returns the span to redact, or None
when the match is not a secret after all (a certificate, a ``${VAR}``, ``self.token``, prose).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable

from detect_secrets.plugins.jwt import JwtTokenDetector

Span = tuple[int, int]
Check = Callable[[str, int, int], Span | None]

# --- private key blocks ------------------------------------------------------------------------

_PEM_END = re.compile(r"-----END [A-Z0-9 ]{0,40}-----")
# The lines of a block whose END is missing (a cut output): base64, PEM headers, escaped \n.
_PEM_BODY = re.compile(
    r"(?:(?:\\r)?\\n|\r?\n|[A-Za-z0-9+/=]{1,200}|[A-Za-z-]{1,20}: [^\r\n]{0,200})"
)
_PEM_REACH = 64 * 1024


def pem_block(text: str, start: int, end: int) -> Span | None:
    """The whole block from its BEGIN line to its END line, or to where its body stops."""
    found = _PEM_END.search(text, end, min(len(text), end + _PEM_REACH))
    if found is not None:
        return start, found.end()
    position = end
    for _ in range(4096):  # a 16 KB key body at most
        step = _PEM_BODY.match(text, position)
        if step is None or step.end() == position:
            break
        position = step.end()
    return start, position


def encoded_pem(text: str, start: int, end: int) -> Span | None:
    """Keep a base64 PEM block (``tls.key`` in a Kubernetes secret) only if it is a private key."""
    head = text[start : start + 64]
    try:
        decoded = base64.b64decode(head, validate=True)
    except ValueError:
        return None
    return (start, end) if b"PRIVATE KEY" in decoded else None


# --- Azure client secrets: ``xxxNQ~`` then 31-34 characters -------------------------------------

_AZURE_HEAD = re.compile(r"[A-Za-z0-9_~.-]{3}[0-9]")


def azure_secret(text: str, start: int, end: int) -> Span | None:
    """Extend a ``Q~…`` match back over its four leading characters."""
    if start < 4 or not _AZURE_HEAD.fullmatch(text, start - 4, start):
        return None
    return start - 4, end


# --- JWTs ----------------------------------------------------------------------------------------


def jwt(text: str, start: int, end: int) -> Span | None:
    """Keep a JWT only when its header and payload decode to JSON."""
    header, _, rest = text[start:end].partition(".")
    payload = rest.partition(".")[0]
    if not JwtTokenDetector.is_formally_valid(f"{header}.{payload}"):
        return None
    return start, end


def trimmed(text: str, start: int, end: int) -> Span | None:
    """A header value without its trailing blanks."""
    while end > start and text[end - 1] in " \t":
        end -= 1
    return (start, end) if end - start >= 4 else None


# --- KEY=value where the key names a secret ---------------------------------------------

# Not secrets: flags, empty markers, documentation's stock examples, Python type names.
_PLACEHOLDER_VALUES = frozenset(
    {"true", "false", "null", "none", "nil", "yes", "no", "undefined", "redacted", "changeme",
     "pass", "password", "passwd", "secret", "tiger", "example", "bytes", "bool", "optional",
     "string", "object", "dict", "list", "tuple", "float", "any"}
)  # fmt: skip
_PROSE = re.compile(r"[ \t]+[A-Za-z]")
# A variable named for what it holds (password=password, auth: _t.AuthType, _csrftoken).
_IDENTIFIER = re.compile(r"[A-Za-z0-9_.]+")
_NAMES = ("token", "passw", "secret", "auth", "key", "cookie", "credential")
# Code, not a value: ``self.token``, ``settings.API_KEY``, ``os.environ["X"]``, ``get_token()``.
_ATTRIBUTE = re.compile(r"[a-z_][a-z0-9_]*(?:\.(?:[a-z_][a-z0-9_]*|[A-Z_][A-Z0-9_]*))+")
_BRACKETS = frozenset("()[]{}<>")


def _is_code(value: str) -> bool:
    """Whether ``value`` reads as code or a variable's name rather than as a value."""
    if not _BRACKETS.isdisjoint(value) or _ATTRIBUTE.fullmatch(value):
        return True
    lowered = value.lower()
    return _IDENTIFIER.fullmatch(value) is not None and any(n in lowered for n in _NAMES)


def keyword_value(text: str, start: int, end: int) -> Span | None:
    """Drop empty, templated, masked and code-like values (``${X}``, ``****``, ``self.token``)."""
    value = text[start:end]
    if len(value) < 4 or value.lower() in _PLACEHOLDER_VALUES:
        return None
    if value[0] in "$%<{*[#&@" or len(set(value)) <= 2:
        return None
    if value.replace(".", "").replace("_", "").isdigit():
        return None
    if _is_code(value):
        return None
    # "credential: sanitize the prompt", ":param token: the token to use": prose, not a value.
    if text[max(0, start - 8) : start].rstrip(" \t")[-1:] == ":" and _PROSE.match(text, end):
        return None
    return start, end
