"""Binary data told apart from text, and described without its bytes."""

from __future__ import annotations

import gzip
import os
import random
import shutil
import string
import zlib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.text.binary import describe, is_binary, kind_of

printable_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufffd")
    | st.sampled_from("\t\n\r\x1b"),
    max_size=5_000,
)


def decoded(data: bytes) -> str:
    """``data`` as the producer decodes bytes that may not be UTF-8."""
    return data.decode("utf-8", errors="replace")


@given(printable_text)
def test_text_without_control_characters_is_never_binary(text: str) -> None:
    assert not is_binary(text) and describe(text) is None


@settings(max_examples=50)
@given(st.integers(min_value=0), st.integers(min_value=4_096, max_value=50_000))
def test_random_bytes_are_binary_and_described_without_them(seed: int, size: int) -> None:
    described = describe(decoded(random.Random(seed).randbytes(size)))
    assert described is not None and described.startswith("[binary data")
    assert all(ch in string.printable or ch == "·" for ch in described)


def test_a_real_executable_is_named_by_its_elf_header() -> None:
    executable = Path(shutil.which("true") or "/bin/true").resolve()
    text = decoded(executable.read_bytes())
    kind = kind_of(text)
    assert kind is not None and kind.startswith("ELF 64-bit ") and kind.endswith("x86-64")
    described = describe(text)
    assert described is not None and "printable strings: " in described
    assert "\ufffd" not in described and "\x00" not in described


def test_compressed_data_and_images_are_named_by_their_magic_numbers() -> None:
    payload = os.urandom(5_000)
    assert kind_of(decoded(gzip.compress(payload))) == "gzip data"
    png = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + os.urandom(100)
    assert kind_of(decoded(png)) == "PNG image"
    assert kind_of(decoded(b"%PDF-1.7\n" + payload)) == "PDF document"
    assert describe(decoded(zlib.compress(payload))) is not None  # no magic, still binary


def test_latin1_text_and_nul_separated_paths_stay_text() -> None:
    latin1 = ("Résumé: la société a réalisé un chiffre d'affaires élevé.\n" * 200).encode("latin-1")
    assert describe(decoded(latin1)) is None
    paths = "\x00".join(f"./src/module_{i}.py" for i in range(300))  # find -print0
    assert describe(paths) is None
