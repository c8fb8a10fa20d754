"""Make raw tool output safe to cut and to show: no ANSI codes, LF line ends, no control chars."""

from __future__ import annotations

import re

# CSI sequences (colours, cursor moves), OSC sequences (titles, hyperlinks), charset selections
# and the remaining two-byte escapes; matched on bytes so a 2 MB log costs a few milliseconds.
_ANSI = re.compile(
    rb"\x1b\[[0-?]*[ -/]*[@-~]"
    rb"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    rb"|\x1b[()*+][0-9A-Za-z]"
    rb"|\x1b[@-Z\\-_]"
)
# Every C0 control except tab and newline, plus DEL. UTF-8 never uses these byte values inside a
# multi-byte sequence, so deleting them byte-wise cannot damage a character.
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F])
_C1_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")
_C1 = re.compile("[\x80-\x9f]")
# Terminal overstrike (man pages): "N\bN" is a bold N, "_\bx" an underlined x.
_OVERSTRIKE = re.compile("[^\n]\x08")


_ANSI_TEXT = re.compile(_ANSI.pattern.decode("ascii"))
_CONTROL_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def sanitize(text: str) -> str:
    """Strip ANSI codes and control chars (tabs and newlines kept); turn CRLF and CR into LF."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates: the byte route would need the slow 'surrogatepass' handler.
        return _sanitize_text(text)
    if b"\x1b" in data:
        data = _ANSI.sub(b"", data)
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if b"\x08" in data:
        # Resolve overstrike on characters, not bytes, before the backspaces are deleted.
        data = _OVERSTRIKE.sub("", data.decode("utf-8")).encode("utf-8")
    has_c1 = not text.isascii() and _C1_UTF8.search(data) is not None
    result = data.translate(None, _CONTROL_BYTES).decode("utf-8")
    return _C1.sub("", result) if has_c1 else result


def _sanitize_text(text: str) -> str:
    if "\x1b" in text:
        text = _ANSI_TEXT.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x08" in text:
        text = _OVERSTRIKE.sub("", text)
    return _CONTROL_TEXT.sub("", text)


def lowercase(text: str) -> str:
    """Lower-case ``text`` keeping every index aligned with the original (one char for one char)."""
    if "\u0130" in text:
        # The only code point whose lower case is two characters long.
        text = text.replace("\u0130", "i")
    return text.lower()
