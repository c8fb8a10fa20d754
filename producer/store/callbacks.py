"""Callback URLs: parsed, normalized, then compared with the allow-list by their parts.

One policy, applied by the producer when a job is submitted and again by the worker before it
POSTs (each under its own ``TERSIFY_WEBHOOK_ALLOWED_URLS``). A URL is refused outright when it
holds a control character, a space or a backslash, userinfo (``user@``), a dot segment (``.``
or ``..``, also percent-encoded) or an encoded ``/``, a host that is neither a DNS name (IDNA
host names are encoded with ``idna``'s UTS-46 mapping) nor an IP address, or a bad port.
What remains is compared with each allowed URL by scheme, host, port and whole path segments
(percent-decoded), and the sender POSTs the normalized URL it was compared as, so what was
checked is what is sent. The standard library's ``urllib.parse`` splits; it compares nothing
and resolves nothing, which is why the checks above are written here.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import SplitResult, unquote, urlsplit

import idna

from tersify.errors import InvalidJobError

MAX_URL_CHARS: Final = 2048
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_FORBIDDEN = re.compile(r"[\x00-\x20\x7f-\x9f\\]")
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_NUMERIC_LABEL = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)")
_ENCODED = re.compile(r"%[0-9a-fA-F]{2}")


class CallbackURLError(InvalidJobError):
    """A callback URL the policy refuses, with the reason."""


@dataclass(frozen=True)
class CallbackURL:
    """A callback URL in normal form: lower-case scheme and ASCII host, a port, path segments."""

    scheme: str
    host: str
    port: int
    segments: tuple[str, ...]
    raw_path: str
    query: str

    def __str__(self) -> str:
        netloc = f"[{self.host}]" if ":" in self.host else self.host
        if self.port != _DEFAULT_PORTS[self.scheme]:
            netloc += f":{self.port}"
        return f"{self.scheme}://{netloc}{self.raw_path}" + (f"?{self.query}" if self.query else "")

    def within(self, allowed: CallbackURL) -> bool:
        """Whether this URL lies under ``allowed``: same origin, whole segments as a prefix."""
        prefix = allowed.segments
        if prefix and prefix[-1] == "":
            prefix = prefix[:-1]
        return (self.scheme, self.host, self.port) == (
            allowed.scheme,
            allowed.host,
            allowed.port,
        ) and self.segments[: len(prefix)] == prefix


def parse(url: str) -> CallbackURL:
    """The normal form of ``url``; ``CallbackURLError`` saying why it is refused."""
    if not isinstance(url, str) or not url:
        raise CallbackURLError("callback_url must be a non-empty string")
    if len(url) > MAX_URL_CHARS:
        raise CallbackURLError(f"callback_url is longer than {MAX_URL_CHARS} characters")
    if _FORBIDDEN.search(url):
        raise CallbackURLError("callback_url holds a control character, a space or a backslash")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise CallbackURLError(f"callback_url is not a URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise CallbackURLError("callback_url must be http or https")
    if "@" in parts.netloc:
        raise CallbackURLError("callback_url must not hold userinfo (user@)")
    host = _host(parts)
    if port == 0:
        raise CallbackURLError("callback_url has port 0")
    raw_path = parts.path or "/"
    return CallbackURL(
        scheme=scheme,
        host=host,
        port=_DEFAULT_PORTS[scheme] if port is None else port,
        segments=_segments(raw_path),
        raw_path=raw_path,
        query=parts.query,
    )


def _host(parts: SplitResult) -> str:
    """The host in ASCII, lower case, without a trailing dot; an IP address in its short form."""
    raw = parts.hostname or ""
    if not raw:
        raise CallbackURLError("callback_url has no host")
    if parts.netloc.startswith("["):
        try:
            return str(ipaddress.IPv6Address(raw))
        except ValueError:
            raise CallbackURLError("callback_url has a bad IPv6 address") from None
    name = raw[:-1] if raw.endswith(".") else raw
    try:
        ascii_name = idna.encode(name, uts46=True).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError, ValueError):
        raise CallbackURLError("callback_url has a host that is not a valid name") from None
    labels = ascii_name.split(".")
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        # A numeric last label makes HTTP clients read the host as IPv4 (``0x7f.1``,
        # ``2130706433``): only the dotted quad is taken, so what is compared is what is dialled.
        try:
            return str(ipaddress.IPv4Address(ascii_name))
        except ValueError:
            raise CallbackURLError("callback_url has a host that is not a valid address") from None
    if not all(_LABEL.fullmatch(label) for label in labels):
        raise CallbackURLError("callback_url has a host that is not a valid name")
    return ascii_name


def _segments(path: str) -> tuple[str, ...]:
    """The path's segments, percent-decoded; dot segments and encoded separators refused."""
    segments = []
    for raw in path.split("/")[1:]:
        try:
            segment = unquote(raw, errors="strict")
        except UnicodeDecodeError:
            raise CallbackURLError(
                "callback_url has a percent-encoding that is not UTF-8"
            ) from None
        # ``..;`` is ``..`` to some servers (path parameters); ``%252e`` is ``.`` to some others.
        if segment.split(";", 1)[0] in (".", "..") or "/" in segment:
            raise CallbackURLError("callback_url has a dot segment or an encoded separator")
        if _FORBIDDEN.search(segment) or _ENCODED.search(segment):
            raise CallbackURLError("callback_url has an encoded control or a double encoding")
        segments.append(segment)
    return tuple(segments)


def allow_list(listed: Sequence[str]) -> tuple[CallbackURL, ...]:
    """The allowed URLs (``TERSIFY_WEBHOOK_ALLOWED_URLS``), parsed; a bad entry raises."""
    return tuple(parse(item) for item in listed)


def checked(listed: Sequence[str], url: str) -> CallbackURL:
    """``url`` in normal form if it lies under an allowed URL; ``CallbackURLError`` if not."""
    found = parse(url)
    try:
        allowed = allow_list(listed)
    except CallbackURLError as exc:
        raise CallbackURLError(f"an allowed URL is refused: {exc}") from None
    if not any(found.within(entry) for entry in allowed):
        raise CallbackURLError("callback_url is not allowed (TERSIFY_WEBHOOK_ALLOWED_URLS)")
    return found
