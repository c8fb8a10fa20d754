"""The detectors: one regex per secret format, each with its kind and how to find the value.

The provider formats with a fixed prefix come from ``detect-secrets``' plugins where its pattern
fits (AWS access keys, GitHub, GitLab, PyPI, SendGrid, OpenAI's legacy keys, credentials in
URLs, JWT validation); the rest are written here: the formats it lacks
(Anthropic, Hugging Face, GCP, Azure client secrets and SAS signatures, fine-grained GitHub
tokens, current OpenAI keys), whole private key blocks, header values, and ``KEY=value`` where the
key names a secret. Each rule names the literals (anchors) its matches start with: one
Aho-Corasick pass over the text finds every anchor at once, and a rule's regex is only tried
where its anchor is, so a scan costs the same however many rules there are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector

from tersify.worker.redact.checks import (
    Check,
    azure_secret,
    encoded_pem,
    flag_value,
    jwt,
    keyword_value,
    option_value,
    pem_block,
    random_value,
    trimmed,
)

WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
"""What a bounded value must not touch on either side: it would be part of a longer word."""


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
    adjust: Check | None = None


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
    """``word`` ending a key; then = or : and the value, quoted or not, on the same line.

    Only the word ignores case: case-folding the value's characters would double the cost.
    """
    return re.compile(
        f"((?i:{word}))"
        r"(?![A-Za-z0-9_])(?:\\{0,3}[\"'])?[ \t]*(?:=|:(?=[ \t\"'\\]))[ \t]*"
        # JSON inside a JSON string (\"v\"), a JSON string with escapes ("a\"b"), 'v', bare v
        # possessive, the escaped one unrolled: a value that does not close fails at once
        r"(?:\\{1,3}\"([^\"\\\r\n]{1,1000}+)\\{1,3}\"|\"([^\"\\\r\n]{0,1000}+(?:\\[^\r\n][^\"\\\r\n]{0,1000}+){0,20}+)\""
        r"|'([^'\r\n]{1,1000}+)'|([^\s\"'`,;\\]{1,1000}+))"
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


def _rule(
    kind: str,
    anchors: tuple[str, ...],
    pattern: str,
    group: int = 0,
    *,
    bounded: bool = False,
    adjust: Check | None = None,
) -> Rule:
    """A rule with its pattern compiled."""
    return Rule(kind, anchors, re.compile(pattern), group, bounded=bounded, adjust=adjust)


def _token(kind: str, anchors: tuple[str, ...], pattern: str | re.Pattern[str]) -> Rule:
    """A provider token: a fixed prefix and alphabet, never part of a longer word."""
    return Rule(kind, anchors, re.compile(pattern), bounded=True)


def _cloud_rules() -> list[Rule]:
    """AWS, Azure and Google Cloud."""
    return [
        _token("aws_access_key", ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"), _ds(AWSKeyDetector)),
        _rule("azure_storage_key", ("AccountKey=",), r"AccountKey=([A-Za-z0-9+/]{86}==)", 1),
        _rule(
            "azure_storage_key", ("SharedAccessKey=",), r"SharedAccessKey=([A-Za-z0-9+/]{43}=)", 1
        ),
        _rule("azure_sas", ("sig=",), r"(?<=[?&])sig=([A-Za-z0-9%+/]{40,120}(?:%3D|=){0,2})", 1),
        _rule("azure_client_secret", ("Q~",), r"Q~[A-Za-z0-9_~.-]{31,34}", adjust=azure_secret),
        _token("gcp_api_key", ("AIza",), r"AIza[0-9A-Za-z_-]{35}"),
        _token("gcp_client_secret", ("GOCSPX-",), r"GOCSPX-[A-Za-z0-9_-]{28}"),
        _token("gcp_access_token", ("ya29.",), r"ya29\.[0-9A-Za-z_-]{30,2000}"),
    ]


def _code_host_rules() -> list[Rule]:
    """GitHub, GitLab, npm and PyPI."""
    gitlab = ("GR1348941", "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-")
    return [
        _token("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), _ds(GitHubTokenDetector)),
        _token("github_token", ("github_pat_",), r"github_pat_[A-Za-z0-9_]{22,255}"),
        _token(
            "gitlab_token",
            ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-"),
            _ds(GitLabTokenDetector),
        ),
        *(
            _token("gitlab_token", (anchor,), _ds(GitLabTokenDetector, index))
            for index, anchor in enumerate(gitlab, start=1)
        ),
        _token("npm_token", ("npm_",), r"npm_[A-Za-z0-9]{36}"),
        _rule("npm_token", ("_authToken",), r"_authToken=[ \t]*([^\s\"']{8,500})", 1),
        _token("pypi_token", ("pypi-",), _ds(PypiTokenDetector, 0)),
        _token("pypi_token", ("pypi-",), _ds(PypiTokenDetector, 1)),
    ]


def _saas_rules() -> list[Rule]:
    """Slack, Stripe, OpenAI, Anthropic, Hugging Face and SendGrid."""
    webhook = r"hooks\.slack\.com/services/(T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+)"
    return [
        _token("slack_token", _prefixed("xox", "abposr", "-"), r"xox[abposr]-[0-9A-Za-z-]{10,250}"),
        _rule("slack_token", ("xapp-",), r"xapp-[0-9]-[A-Z0-9]{6,20}-[0-9]{6,20}-[a-f0-9]{32,80}"),
        _rule("slack_webhook", ("hooks.slack.com/services/",), webhook, 1),
        _token(
            "stripe_key",
            ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
            r"[rs]k_(?:live|test)_[0-9A-Za-z]{24,99}",
        ),
        _token("stripe_key", ("whsec_",), r"whsec_[0-9A-Za-z]{32,64}"),
        _rule("anthropic_key", ("sk-ant-",), r"sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{20,200}"),
        _rule("openai_key", ("sk-",), r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,250}"),
        _token("openai_key", ("sk-",), _ds(OpenAIDetector)),
        _token("openai_key", ("sk-",), r"sk-[A-Za-z0-9]{48}"),
        _token("huggingface_token", ("hf_",), r"hf_[A-Za-z0-9]{34,40}"),
        _token("sendgrid_key", ("SG.",), _ds(SendGridDetector)),
    ]


def _block_rules() -> list[Rule]:
    """Private key blocks (as text and base64), JWTs, and passwords in URLs."""
    jwt_part = (
        r"eyJ[A-Za-z0-9_-]{10,4000}={0,2}\.eyJ[A-Za-z0-9_-]{4,8000}={0,2}\.[A-Za-z0-9_-]{0,1000}"
    )
    # detect-secrets' URL pattern, widened to an empty user (redis://:pw@) and passwords with
    # sub-delimiters (!, +, ...).
    url = r"://[^\s:/?#\[\]@\"'<>]{0,200}:([^\s/?#\[\]@\"'<>]{1,200})@"
    return [
        _rule(
            "private_key",
            ("-----BEGIN ",),
            r"-----BEGIN [A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----",
            adjust=pem_block,
        ),
        _rule(
            "private_key",
            ("LS0tLS1CRUdJT",),
            r"LS0tLS1CRUdJT[A-Za-z0-9+/]{40,20000}={0,2}",
            adjust=encoded_pem,
        ),
        _rule("jwt", ("eyJ",), jwt_part, bounded=True, adjust=jwt),
        _rule("url_password", ("://",), url, 1, adjust=keyword_value),
    ]


def _prefixed(head: str, letters: str, tail: str) -> tuple[str, ...]:
    """``head`` + each of ``letters`` + ``tail``: the anchors of one token family."""
    return tuple(f"{head}{letter}{tail}" for letter in letters)


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
            adjust=trimmed,
        ),
        Rule(
            "cookie",
            _cased("cookie", "set-cookie"),
            re.compile(f"(?:set-)?cookie{header}{cookies}", re.IGNORECASE),
            1,
            generic=True,
            adjust=trimmed,
        ),
    ]
    for word in _SECRET_WORDS:
        rule = Rule(keyword_kind(word), _cased(word), _keyword(word), -1, generic=True)
        rules.append(replace(rule, adjust=keyword_value))
    key = Rule("api_key", _key_words(), _keyword(r"[a-z]+[_.-]?key"), -1, generic=True)
    rules.append(replace(key, adjust=keyword_value))
    return rules + _command_line_rules()


def _command_line_rules() -> list[Rule]:
    """Secrets on command lines and in keys that only contain a secret's name: ``curl -u
    user:pass``, ``mysql -pPASS``, ``--password VALUE``, ``SECRET_KEY_BASE=…``."""
    user = (
        r"(?<![^\s'\"])(?:-u[ \t]*|--user(?:[ \t]+|=))['\"]?[^\s:'\"@/=-][^\s:'\"@/=]{0,199}:"
        r"([^\s'\"@]{1,200})(?=[\s'\"]|$)"
    )
    mysql = r"(?:mysql|mariadb)[a-z]*[ \t][^\r\n|;&]{0,200}?(?<=[ \t])-p([^\s'\"-][^\s'\"]{2,200})"
    rules = [
        _rule("password", ("-u", "--user"), user, 1, adjust=flag_value),
        _rule("password", ("mysql", "mariadb"), mysql, 1, adjust=flag_value),
    ]
    for word in _SECRET_WORDS:
        flag = rf"(?<=-)(?i:{word})(?![A-Za-z0-9_=:])[ \t]+['\"]?([^\s'\"]{{1,1000}})"
        rules.append(_rule(keyword_kind(word), _cased(word), flag, 1, adjust=option_value))
    inner = ("SECRET", "TOKEN", "PASSWORD", "PASSWD", "KEY", "AUTH", "CREDENTIAL", "CREDENTIALS")
    middle = r"(?:_[A-Z0-9]+){1,4}[ \t]*[=:][ \t]*['\"]?([^\s'\"`,;]{8,1000})"
    for word in inner:
        pattern = f"(?<![A-Za-z0-9]){word}{middle}"
        kind = keyword_kind(word.lower())
        rules.append(_rule(kind, (f"{word}_",), pattern, 1, adjust=random_value))
    return [replace(rule, generic=True) for rule in rules]


RULES: tuple[Rule, ...] = (
    *_cloud_rules(),
    *_code_host_rules(),
    *_saas_rules(),
    *_block_rules(),
    *_context_rules(),
)
KINDS: tuple[str, ...] = tuple(sorted({rule.kind for rule in RULES}))
"""Every placeholder kind: the metric's label values."""
