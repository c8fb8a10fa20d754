"""Binary data among tool outputs: told apart from text and described as what it is.

A ``cat`` of an executable or a ``curl`` of an image arrives as bytes decoded with replacement:
NUL bytes, control characters and U+FFFD where the bytes were not UTF-8. Summarized as text,
that is garbage with a header. An output is binary when it opens with a known magic number; when
control characters other than a terminal's (tab, line ends, escape, backspace) and runs of NULs
make 3% of its first 64 KiB (``find -print0`` has single NULs between paths); or when a
quarter of it is not UTF-8 at all (a Latin-1 text has a few replacements; compressed or random
data about half). ``describe`` then says what the data is, how large, and the printable strings
in it, as ``strings`` would.
"""

from __future__ import annotations

import re
from typing import Final

_SAMPLE: Final = 64 * 1024
_CONTROL_SHARE: Final = 0.03
_NOT_UTF8_SHARE: Final = 0.25
_SHOWN_CHARS: Final = 1200
_STRINGS_SCANNED: Final = 4 * 1024 * 1024
_MAX_STRINGS: Final = 60
_R: Final = "\ufffd"  # a byte that was not UTF-8 decodes to this

# Every C0 control but tab, line feed, vertical tab, form feed, carriage return, backspace and
# escape (colors, overstrike), and DEL.
_CONTROL = re.compile("[\x00-\x07\x0e-\x1a\x1c-\x1f\x7f]")
_PRINTABLE_RUN = re.compile(r"[\x20-\x7e\t]{6,200}")
_WORDY = re.compile(r"[A-Za-z]{3}")
_NAME_CHARS = re.compile(r"[A-Za-z0-9_./:@+-]")

# Magic numbers as they read after decoding with replacement (bytes >= 0x80 become U+FFFD).
_MAGIC: Final = (
    (re.compile("\\A\ufffdPNG\r\n\x1a\n"), "PNG image"),
    (re.compile("\\AGIF8[79]a"), "GIF image"),
    (re.compile(f"\\A{_R}{_R}{_R}.{{0,3}}(?:JFIF|Exif)", re.S), "JPEG image"),
    (re.compile("\\A%PDF-(\\d\\.\\d)"), "PDF document"),
    (re.compile("\\APK\x03\x04"), "Zip archive"),
    (re.compile(f"\\A\x1f{_R}\x08"), "gzip data"),
    (re.compile("\\ABZh[1-9]1AY&SY"), "bzip2 data"),
    (re.compile(f"\\A{_R}7zXZ\x00"), "xz data"),
    (re.compile(f"\\A7z{_R}{_R}'\x1c"), "7-zip archive"),
    (re.compile(f"\\A\\({_R}/{_R}"), "Zstandard data"),
    (re.compile("\\ASQLite format 3\x00"), "SQLite 3 database"),
    (re.compile("\\A\x00asm"), "WebAssembly module"),
    (re.compile("\\AMZ.{0,1000}?PE\x00\x00", re.S), "PE executable (Windows)"),
    (re.compile("\\A.{257}ustar", re.S), "tar archive"),
    (re.compile("\\ARIFF.{1,4}?(WAVE|AVI |WEBP)", re.S), "RIFF {0}"),
    (re.compile("\\AOggS"), "Ogg media"),
    (re.compile("\\AfLaC"), "FLAC audio"),
    (re.compile("\\AID3"), "MP3 audio"),
    (re.compile("\\A.{4}ftyp(\\w{3,4})", re.S), "ISO media ({0})"),
)
_ELF_TYPES: Final = {1: "relocatable", 2: "executable", 3: "shared object", 4: "core file"}
_ELF_MACHINES: Final = {0x03: "x86", 0x28: "ARM", 0x3E: "x86-64", 0x08: "MIPS"}


def is_binary(text: str) -> bool:
    """Whether ``text`` is binary data decoded as text (see the module)."""
    if kind_of(text) is not None:
        return True
    sample = text[:_SAMPLE]
    if not sample:
        return False
    # a NUL alone separates records (find -print0); runs of them are a binary's padding
    nuls = sample.count("\x00")
    controls = len(_CONTROL.findall(sample)) - nuls + 2 * sample.count("\x00\x00")
    return controls >= _CONTROL_SHARE * len(sample) or controls + sample.count(
        _R
    ) >= _NOT_UTF8_SHARE * len(sample)


def kind_of(text: str) -> str | None:
    """What the data's magic number says it is ("ELF 64-bit executable, x86-64"), or None."""
    head = text[:2048]
    if head.startswith("\x7fELF"):
        return _elf(head)
    for pattern, name in _MAGIC:
        if match := pattern.match(head):
            return name.format(*match.groups())
    return None


def describe(text: str) -> str | None:
    """One paragraph saying what the binary ``text`` is, its size and its printable strings
    (never the bytes themselves); None when ``text`` is not binary."""
    if not is_binary(text):
        return None
    kind = kind_of(text) or "binary data (or text not in UTF-8)"
    size = _size(len(text.encode("utf-8", "surrogatepass")) - 2 * text.count(_R))
    shown = ""
    for string in _strings(text):
        if len(shown) + len(string) > _SHOWN_CHARS:
            break
        shown = f"{shown} · {string}" if shown else string
    listed = f"printable strings: {shown}" if shown else "no printable strings"
    return f"[{kind}, {size}; not text, so not summarized as text; {listed}]"


def _elf(head: str) -> str:
    bits = {"\x01": "32-bit", "\x02": "64-bit"}.get(head[4:5], "")
    little = head[5:6] != "\x02"
    kind = _elf_field(head, 16, little, _ELF_TYPES)
    machine = _elf_field(head, 18, little, _ELF_MACHINES)
    name = " ".join(part for part in ("ELF", bits, kind or "file") if part)
    return f"{name}, {machine}" if machine else name


def _elf_field(head: str, at: int, little: bool, names: dict[int, str]) -> str | None:
    pair = head[at : at + 2]
    if len(pair) < 2 or _R in pair:
        return None
    low, high = (ord(pair[0]), ord(pair[1])) if little else (ord(pair[1]), ord(pair[0]))
    return names.get(low + 256 * high)


def _strings(text: str) -> list[str]:
    """Distinct printable runs of six or more characters that read as names or words (letters,
    mostly name characters), in order."""
    seen: dict[str, None] = {}
    for match in _PRINTABLE_RUN.finditer(text, 0, _STRINGS_SCANNED):
        run = match.group().strip()
        named = len(_NAME_CHARS.findall(run)) + run.count(" ")
        if len(run) >= 6 and _WORDY.search(run) and named >= 0.9 * len(run):
            seen.setdefault(run, None)
            if len(seen) >= _MAX_STRINGS:
                break
    return list(seen)


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.0f} KB"
    return f"{count / 1024 / 1024:.1f} MB"
