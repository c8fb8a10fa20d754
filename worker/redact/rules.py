"""The detectors: one regex per secret format, each with its kind and how to find the value.

The provider formats with a fixed prefix come from ``detect-secrets``' plugins where its pattern
fits (AWS access keys, GitHub, GitLab, PyPI, SendGrid, OpenAI's legacy keys, npm's ``.npmrc``,
credentials in URLs, JWT validation); the rest are written here: the formats it lacks
(Anthropic, Hugging Face, GCP, Azure client secrets and SAS signatures, fine-grained GitHub
tokens, current OpenAI keys), whole private key blocks, header values, and ``KEY=value`` where the
key names a secret. Each rule names the literals (anchors) its matches start with: one
Aho-Corasick pass over the text finds every anchor at once, and a rule's regex is only tried
where its anchor is, so a scan costs the same however many rules there are.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector

Span = tuple[int, int]
Adjust = Callable[[str, int, int], Span | None]

_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


@dataclass(frozen=True, slots=True)
class Rule:
    """One detector: matches of ``pattern`` (its ``group``) are secrets of ``kind``.

    ``anchors``: the literals a match starts with; ``pattern`` is tried where one is found.
    ``group``: the value's group; -1: the last group that took part (alternative quotings).
    ``bounded``: the value must not continue a longer word on either side.
    ``generic``: a context rule (header, key name): a format rule on the same span wins.
    ``adjust``: given the text and the value's span, the span to redact, or None to drop it.
    """

    kind: str
    anchors: tuple[str, ...]
    pattern: re.Pattern[str]
    group: int = 0
    bounded: bool = False
    generic: bool = False
    adjust: Adjust | None = None


# --- private key blocks ------------------------------------------------------------------------

_PEM_END = re.compile(r"-----END [A-Z0-9 ]{0,40}-----")
# The lines of a block whose END is missing (a cut output): base64, PEM headers, escaped \n.
_PEM_BODY = re.compile(
    r"(?:(?:\\r)?\\n|\r?\n|[A-Za-z0-9+/=]{1,200}|[A-Za-z-]{1,20}: [^\r\n]{0,200})"
)
_PEM_REACH = 64 * 1024


def _pem_block(text: str, start: int, end: int) -> Span | None:
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


_URL_PASSWORD = re.compile(r"://[^\s:/?#\[\]@\"'<>]{0,200}:([^\s/?#\[\]@\"'<>]{1,200})@")
_B64_PEM = re.compile(r"LS0tLS1CRUdJT[A-Za-z0-9+/]{40,20000}={0,2}")


def _encoded_pem(text: str, start: int, end: int) -> Span | None:
    """Keep a base64 PEM block (``tls.key`` in a Kubernetes secret) only if it is a private key."""
    head = text[start : start + 64]
    try:
        decoded = base64.b64decode(head, validate=True)
    except ValueError:
        return None
    return (start, end) if b"PRIVATE KEY" in decoded else None


# --- Azure client secrets: ``xxxNQ~`` then 31-34 characters -------------------------------------

_AZURE_HEAD = re.compile(r"[A-Za-z0-9_~.-]{3}[0-9]")


def _azure_secret(text: str, start: int, end: int) -> Span | None:
    """Extend a ``Q~…`` match back over its four leading characters."""
    if start < 4 or not _AZURE_HEAD.fullmatch(text, start - 4, start):
        return None
    return start - 4, end


# --- JWTs ----------------------------------------------------------------------------------------


def _jwt(text: str, start: int, end: int) -> Span | None:
    """Keep a JWT only when its header and payload decode to JSON."""
    header, _, rest = text[start:end].partition(".")
    payload = rest.partition(".")[0]
    if not JwtTokenDetector.is_formally_valid(f"{header}.{payload}"):
        return None
    return start, end


def _trimmed(text: str, start: int, end: int) -> Span | None:
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
_NAMED = re.compile(
    r"[A-Za-z0-9_.]*(?i:token|passw|secret|auth|key|cookie|credential)[A-Za-z0-9_]*"
)
# Code, not a value: ``self.token``, ``settings.API_KEY``, ``os.environ["X"]``, ``get_token()``.
_CODE_VALUE = re.compile(
    r"[a-z_][a-z0-9_]*(?:\.(?:[a-z_][a-z0-9_]*|[A-Z_][A-Z0-9_]*))+|.*[()\[\]{}<>].*"
)


def _keyword_value(text: str, start: int, end: int) -> Span | None:
    """Drop empty, templated, masked and code-like values (``${X}``, ``****``, ``self.token``)."""
    value = text[start:end]
    if len(value) < 4 or value.lower() in _PLACEHOLDER_VALUES:
        return None
    if value[0] in "$%<{*[#&@" or len(set(value)) <= 2:
        return None
    if value.replace(".", "").replace("_", "").isdigit():
        return None
    if _CODE_VALUE.fullmatch(value) or _NAMED.fullmatch(value):
        return None
    # "credential: sanitize the prompt", ":param token: the token to use": prose, not a value.
    if text[max(0, start - 8) : start].rstrip(" \t")[-1:] == ":" and _PROSE.match(text, end):
        return None
    return start, end


_SECRET_WORDS = (
    "password", "passwd", "passphrase", "pwd", "secret", "token", "credential", "credentials",
    "auth",
)  # fmt: skip
# A key that ends in "key" names a secret only after one of these (api_key, accessKey, ...).
_KEY_OWNERS = (
    "api", "access", "secret", "private", "auth", "session", "signing", "encryption", "master",
    "account", "client", "license", "service",
)  # fmt: skip


def _key_words() -> tuple[str, ...]:
    """``api_key``, ``API-KEY``, ``apiKey``, ``ApiKey``, ``apikey``: each owner with ``key``."""
    words = [f"{owner}{sep}key" for owner in _KEY_OWNERS for sep in ("", "_", "-", ".")]
    words += [f"{owner}Key" for owner in _KEY_OWNERS]
    return tuple(dict.fromkeys(v for w in words for v in (w, w.upper(), w[0].upper() + w[1:])))


def _keyword(word: str) -> re.Pattern[str]:
    """``word`` ending a key; then = or : and the value, quoted or not, on the same line."""
    return re.compile(
        f"({word})"
        r"(?![a-z0-9_])[\"']?[ \t]*(?:=|:(?=[ \t\"']))[ \t]*"
        r"(?:\"([^\"\r\n]{1,1000})\"|'([^'\r\n]{1,1000})'|([^\s\"'`,;]{1,1000}))",
        re.IGNORECASE,
    )


def keyword_kind(word: str) -> str:
    """The placeholder kind of a ``KEY=value`` match, from the secret word ending its key."""
    word = word.lower()
    if word.startswith("pass") or word == "pwd":
        return "password"
    if word in ("secret", "token", "key"):
        return {"key": "api_key"}.get(word, word)
    return "credential"


def _cased(*words: str) -> tuple[str, ...]:
    """Each word as written in lower case, upper case and capitalized (camelCase keys)."""
    return tuple(dict.fromkeys(v for w in words for v in (w, w.upper(), w.capitalize())))


def _ds(detector: type, index: int = 0) -> re.Pattern[str]:
    """Pattern ``index`` of a detect-secrets plugin, its flags kept."""
    denylist = detector.denylist  # type: ignore[attr-defined]
    pattern: re.Pattern[str] = denylist[index]
    return pattern


def _format_rules() -> list[Rule]:
    """The provider and file formats: a fixed prefix, a fixed alphabet."""
    return [
        Rule(
            "aws_access_key",
            ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
            _ds(AWSKeyDetector),
            bounded=True,
        ),
        Rule(
            "azure_storage_key",
            ("AccountKey=",),
            re.compile(r"AccountKey=([A-Za-z0-9+/]{86}==)"),
            1,
        ),
        Rule(
            "azure_storage_key",
            ("SharedAccessKey=",),
            re.compile(r"SharedAccessKey=([A-Za-z0-9+/]{43}=)"),
            1,
        ),
        Rule(
            "azure_sas",
            ("sig=",),
            re.compile(r"(?<=[?&])sig=([A-Za-z0-9%+/]{40,120}(?:%3D|=){0,2})"),
            1,
        ),
        Rule(
            "azure_client_secret",
            ("Q~",),
            re.compile(r"Q~[A-Za-z0-9_~.-]{31,34}"),
            adjust=_azure_secret,
        ),
        Rule(
            "github_token",
            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
            _ds(GitHubTokenDetector),
            bounded=True,
        ),
        Rule(
            "github_token",
            ("github_pat_",),
            re.compile(r"github_pat_[A-Za-z0-9_]{22,255}"),
            bounded=True,
        ),
        Rule(
            "gitlab_token",
            ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-"),
            _ds(GitLabTokenDetector, 0),
            bounded=True,
        ),
        *(
            Rule("gitlab_token", (anchor,), _ds(GitLabTokenDetector, index), bounded=True)
            for index, anchor in enumerate(
                ("GR1348941", "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-"), start=1
            )
        ),
        Rule(
            "slack_token",
            ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-"),
            re.compile(r"xox[abposr]-[0-9A-Za-z-]{10,250}"),
            bounded=True,
        ),
        Rule(
            "slack_token",
            ("xapp-",),
            re.compile(r"xapp-[0-9]-[A-Z0-9]{6,20}-[0-9]{6,20}-[a-f0-9]{32,80}"),
        ),
        Rule(
            "slack_webhook",
            ("hooks.slack.com/services/",),
            re.compile(r"hooks\.slack\.com/services/(T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+)"),
            1,
        ),
        Rule(
            "stripe_key",
            ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
            re.compile(r"[rs]k_(?:live|test)_[0-9A-Za-z]{24,99}"),
            bounded=True,
        ),
        Rule("stripe_key", ("whsec_",), re.compile(r"whsec_[0-9A-Za-z]{32,64}"), bounded=True),
        Rule(
            "anthropic_key",
            ("sk-ant-",),
            re.compile(r"sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{20,200}"),
        ),
        Rule(
            "openai_key", ("sk-",), re.compile(r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,250}")
        ),
        Rule("openai_key", ("sk-",), _ds(OpenAIDetector), bounded=True),
        Rule("openai_key", ("sk-",), re.compile(r"sk-[A-Za-z0-9]{48}"), bounded=True),
        Rule("huggingface_token", ("hf_",), re.compile(r"hf_[A-Za-z0-9]{34,40}"), bounded=True),
        Rule("npm_token", ("npm_",), re.compile(r"npm_[A-Za-z0-9]{36}"), bounded=True),
        Rule("npm_token", ("_authToken",), re.compile(r"_authToken=[ \t]*([^\s\"']{8,500})"), 1),
        Rule("pypi_token", ("pypi-",), _ds(PypiTokenDetector, 0), bounded=True),
        Rule("pypi_token", ("pypi-",), _ds(PypiTokenDetector, 1), bounded=True),
        Rule("gcp_api_key", ("AIza",), re.compile(r"AIza[0-9A-Za-z_-]{35}"), bounded=True),
        Rule(
            "gcp_client_secret", ("GOCSPX-",), re.compile(r"GOCSPX-[A-Za-z0-9_-]{28}"), bounded=True
        ),
        Rule(
            "gcp_access_token",
            ("ya29.",),
            re.compile(r"ya29\.[0-9A-Za-z_-]{30,2000}"),
            bounded=True,
        ),
        Rule("sendgrid_key", ("SG.",), _ds(SendGridDetector), bounded=True),
        Rule(
            "private_key",
            ("-----BEGIN ",),
            re.compile(r"-----BEGIN [A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"),
            adjust=_pem_block,
        ),
        Rule(
            "jwt",
            ("eyJ",),
            re.compile(
                r"eyJ[A-Za-z0-9_-]{10,4000}={0,2}\.eyJ[A-Za-z0-9_-]{4,8000}={0,2}\.[A-Za-z0-9_-]{0,1000}"
            ),
            bounded=True,
            adjust=_jwt,
        ),
        Rule("private_key", ("LS0tLS1CRUdJT",), _B64_PEM, adjust=_encoded_pem),
        # detect-secrets' URL pattern, widened to an empty user (redis://:pw@) and passwords
        # with sub-delimiters (!, +, ...).
        Rule("url_password", ("://",), _URL_PASSWORD, 1, adjust=_keyword_value),
    ]


def _context_rules() -> list[Rule]:
    """Secrets known by where they stand: header values, values of keys that name a secret."""
    header = r"[\"']?[ \t]*[:=][ \t]*[\"']?"
    schemes = r"(?:(?:bearer|basic|token|bot|apikey|negotiate|ntlm)[ \t]+)?"
    value = r"([^\s\"'\\,;][^\r\n\"'\\]{3,4000})"
    cookies = r"([^\s\"'\\,;=()]{1,200}=[^\r\n\"'\\]{1,4000})"  # name=value; ...
    rules = [
        Rule(
            "authorization",
            _cased("authorization", "proxy-authorization"),
            re.compile(f"(?:proxy-)?authorization{header}{schemes}{value}", re.IGNORECASE),
            1,
            generic=True,
            adjust=_trimmed,
        ),
        Rule(
            "cookie",
            _cased("cookie", "set-cookie"),
            re.compile(f"(?:set-)?cookie{header}{cookies}", re.IGNORECASE),
            1,
            generic=True,
            adjust=_trimmed,
        ),
    ]
    for word in _SECRET_WORDS:
        rule = Rule(keyword_kind(word), _cased(word), _keyword(word), -1, generic=True)
        rules.append(replace(rule, adjust=_keyword_value))
    key = Rule("api_key", _key_words(), _keyword(r"[a-z]+[_.-]?key"), -1, generic=True)
    rules.append(replace(key, adjust=_keyword_value))
    return rules


RULES: tuple[Rule, ...] = (*_format_rules(), *_context_rules())
KINDS: tuple[str, ...] = tuple(sorted({rule.kind for rule in RULES}))
"""Every placeholder kind: the metric's label values."""


def is_word_char(char: str) -> bool:
    """Whether ``char`` would make a bounded value part of a longer word."""
    return char in _WORD
