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
_NAMES = ("token", "passw", "secret", "auth", "key", "cookie", "credential", "pwd")
# The words of an identifier: snake_case and dotted parts, then camelCase humps.
_A_NAME = re.compile("|".join(_NAMES), re.IGNORECASE)
# A whole word that is a secret's name, and the shape of one part of an identifier: lower,
# UPPER or camelCase words, digits only at its end (``oauth2``, never ``XR3Q``).
_A_NAME_WORD = re.compile(
    r"(?:^| )(?:token|passwd|password|passphrase|pass|pwd|secret|auth|key|cookie|credential)s?"
    r"(?= |$)",
    re.IGNORECASE,
)
_PART = re.compile(r"(?:[a-z]+|[A-Z]+|[A-Z]?[a-z]+(?:[A-Z][a-z]+)*(?:[A-Z]+)?)[0-9]*")
_PRIVATE = re.compile(r"_+[a-z]+")
_HUMPS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
# Code, not a value: ``self.token``, ``settings.API_KEY``, ``os.environ["X"]``, ``get_token()``.
_ATTRIBUTE = re.compile(r"[a-z_][a-z0-9_]*(?:\.(?:[a-z_][a-z0-9_]*|[A-Z_][A-Z0-9_]*))+")
_BRACKETS = frozenset("()[]{}<>")


def is_name(value: str) -> bool:
    """Whether ``value`` has the shape of a variable named for a secret, not of a secret.

    Judged by its words, never by a word inside one: an identifier whose parts (split by ``_``
    and ``.``) are lower, UPPER or camelCase words, with digits only at a part's end and only
    when split, one word of which is a secret's name as a whole (``auth_token``, ``apiKey``,
    ``AuthType``, ``oauth2_token``); or a private lower-case name (``_csrftoken``).
    ``supersecret123``, ``Hunter2Secret``, ``xQmTokenzPq`` and ``a8B_XR3Q_Pwd`` are values.
    """
    if _IDENTIFIER.fullmatch(value) is None:
        return False
    if _PRIVATE.fullmatch(value):
        return True
    value = value.lstrip("_")
    split = "_" in value or "." in value
    if not split and any(c.isdigit() for c in value):
        return False
    if _A_NAME.search(value) is None:  # most values: no secret's name anywhere, decided in C
        return False
    parts = [part for part in re.split(r"[_.]", value) if part]
    if not all(_PART.fullmatch(part) for part in parts):
        return False
    words = " ".join(hump for part in parts for hump in _HUMPS.findall(part))
    return _A_NAME_WORD.search(words) is not None


def _is_code(value: str) -> bool:
    """Whether ``value`` reads as code or a variable's name rather than as a value."""
    if not _BRACKETS.isdisjoint(value) or _ATTRIBUTE.fullmatch(value):
        return True
    return is_name(value)


def _plausible(value: str) -> bool:
    """Whether a value may be a secret: not empty, templated, masked or code-like (``${X}``,
    ``****``, ``self.token``)."""
    if len(value) < 4 or value.lower() in _PLACEHOLDER_VALUES:
        return False
    if value[0] in "$%<{*[#&@" or len(set(value)) <= 2:
        return False
    if value.replace(".", "").replace("_", "").isdigit():
        return False
    return not _is_code(value)


def keyword_value(text: str, start: int, end: int) -> Span | None:
    """Drop implausible values (``_plausible``) and prose after a colon."""
    if not _plausible(text[start:end]):
        return None
    # "credential: sanitize the prompt", ":param token: the token to use": prose, not a value.
    if text[max(0, start - 8) : start].rstrip(" \t")[-1:] == ":" and _PROSE.match(text, end):
        return None
    return start, end


# --- values judged by their shape alone (a key that only contains a secret's name) -------------

_NOT_RANDOM_START = frozenset("/.~$%{<*[#&@-")


def random_value(text: str, start: int, end: int) -> Span | None:
    """Keep a value only if it looks generated: letters and digits mixed, not a path, URL, name,
    template or mask (``SECRET_KEY_BASE=9f3c…``, not ``TOKEN_FILE=/run/token``)."""
    value = text[start:end]
    if len(value) < 8 or value[0] in _NOT_RANDOM_START or "://" in value:
        return None
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return None
    if len(set(value)) <= 4 or value.replace(".", "").replace("-", "").isdigit():
        return None
    return keyword_value(text, start, end)


def flag_value(text: str, start: int, end: int) -> Span | None:
    """A command-line value (``--password VALUE``, ``-u user:VALUE``, ``-pVALUE``): plausible,
    and never another flag."""
    if text[start] == "-" or not _plausible(text[start:end]):
        return None
    return start, end


_WORDS = re.compile(r"[a-z]+(?:-[a-z]+)*")
_EMAIL = re.compile(r"[^\s@]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")


def option_value(text: str, start: int, end: int) -> Span | None:
    """The value of a long option naming a secret (``--password V``, ``--db-token V``): the
    option must start with ``--``; words (``command-line``) and e-mail addresses are not values."""
    value = text[start:end]
    if _WORDS.fullmatch(value) or _EMAIL.fullmatch(value):
        return None
    position = start
    while position > 0 and text[position - 1] in " \t'\"":
        position -= 1
    begin = position
    while begin > 0 and not text[begin - 1].isspace() and text[begin - 1] not in "'\"":
        begin -= 1
    if not text.startswith("--", begin):
        return None
    return flag_value(text, start, end)
