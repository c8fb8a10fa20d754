"""Generated callback URLs: every trick an allow-list compared as text falls for.

Each URL is built from parts an attacker chooses: scheme spellings, userinfo, the allowed host
spelled otherwise (case, trailing dot, IDNA, numeric IPv4 forms, IPv6) or another host, ports,
path segments with dot segments (plain, percent-encoded, double-encoded, with ``;``), encoded
separators and controls, raw control characters, and queries. Used by the policy's unit tests
and by the sender's test against a loopback receiver.
"""

from __future__ import annotations

from hypothesis import strategies as st

ALLOWED_HOST = "127.0.0.1"
ALLOWED_PREFIX = "/hooks/"

SCHEMES = st.sampled_from(["http", "HTTP", "https", "hTTp", "ftp", "file", "javascript", ""])
USERINFO = st.sampled_from(["", "user@", "user:pw@", f"{ALLOWED_HOST}@", ":@", "a%40b@"])
HOSTS = st.sampled_from(
    [
        ALLOWED_HOST,
        "127.0.0.1.",
        "127.1",
        "0x7f.0.0.1",
        "2130706433",
        "0177.0.0.1",
        "127.0.0.01",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "localhost",
        "LOCALHOST",
        "xn--ls8h.example",
        "bücher.example",
        "ex\u00e4mple.com",
        "127.0.0.1.evil.example",
        "evil.example",
        "127.0.0.1%2f",
        "[::1",
        "",
    ]
)
SEGMENTS = st.sampled_from(
    [
        "hooks", "HOOKS", "ok", "admin", "reset", "", ".", "..", "%2e", "%2e%2e", "%2E%2e",
        ".%2e", "%252e%252e", "..;", "..;x", "%2f", "a%2fb", "%5c", "a\\b", "%00", "%0a",
        "%0d%0a", "a\nb", "a\tb", "a\x00b", "a b", "caf\u00e9", "%ff", "~user", "ok;x=1",
    ]
)  # fmt: skip
PORTS = st.sampled_from(["", ":80", ":0", ":65535", ":65536", ":-1", ":x", ":8080"])
QUERIES = st.sampled_from(["", "?a=1", "?next=/../admin", "?x=\n", "#frag", "?a=%0d%0a"])


@st.composite
def callback_urls(draw: st.DrawFn, port: int) -> str:
    """A URL aimed at (or around) ``http://127.0.0.1:PORT/hooks/``."""
    scheme = draw(SCHEMES)
    host = draw(HOSTS)
    port_part = draw(st.one_of(st.just(f":{port}"), PORTS))
    segments = draw(st.lists(SEGMENTS, min_size=0, max_size=5))
    if draw(st.booleans()):
        segments = ["hooks", *segments]
    path = "/" + "/".join(segments) if segments or draw(st.booleans()) else ""
    return f"{scheme}://{draw(USERINFO)}{host}{port_part}{path}{draw(QUERIES)}"
