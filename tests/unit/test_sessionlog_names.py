"""Session log file names: one per session id, inside the log directory, never shared."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tersify.worker.store.lognames import (
    file_stem,
    forget_files,
    legacy_stem,
    session_file,
    session_files,
    stem_of,
)

SESSION_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:@/+=-"
session_ids = st.text(alphabet=SESSION_CHARS, min_size=1, max_size=200)


@given(session_ids, session_ids)
def test_two_session_ids_never_share_a_file(a: str, b: str) -> None:
    if a != b:
        assert file_stem(a) != file_stem(b)


@given(session_ids)
def test_every_name_is_a_short_plain_file_in_the_directory(session_id: str) -> None:
    path = session_file(Path("/logs"), session_id)
    assert path.parent == Path("/logs")
    assert len(path.name.encode()) < 255
    assert not path.name.startswith(("-", "."))
    assert "/" not in path.name


def test_look_alike_ids_of_the_old_scheme_get_their_own_names() -> None:
    names = {file_stem(s) for s in (".abc", "abc", "_abc", "abc-2f1c8e1f0b7a", ".", "..", "...")}
    assert len(names) == 7
    assert file_stem("sess-42") == "sess-42"  # plain ids keep their plain names


def _family(session_id: str) -> list[str]:
    """Every name a session's files can have: current, rotated, and the earlier long form."""
    stems = [file_stem(session_id), legacy_stem(session_id)]
    return [
        f"{stem}{suffix}"
        for stem in stems
        if stem is not None
        for suffix in (".jsonl", "~1900000000000-000.jsonl", "~1900000000123-042.jsonl")
    ]


@given(session_ids, session_ids)
def test_no_name_of_one_session_is_read_back_as_anothers(a: str, b: str) -> None:
    if a == b:
        return
    theirs = {file_stem(b), legacy_stem(b)}
    assert all(stem_of(name) not in theirs for name in _family(a))
    assert all(stem_of(name) in {file_stem(a), legacy_stem(a)} for name in _family(a))


def test_forgetting_a_127_character_session_leaves_a_longer_one_that_starts_with_it(
    tmp_path: Path,
) -> None:
    short = "s" * 127
    longer = short + "-and-more" * 10
    for name in [*_family(short), *_family(longer)]:
        (tmp_path / name).write_text("{}\n")
    assert forget_files(tmp_path, short) == 3  # a short id has no earlier long form
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(_family(longer))
    assert forget_files(tmp_path, longer) == 6  # current and earlier names alike
    assert list(tmp_path.iterdir()) == []


def test_a_long_ids_file_of_the_earlier_form_is_still_the_sessions(tmp_path: Path) -> None:
    longer = "x" * 190
    old = legacy_stem(longer)
    assert old is not None and "~" in old
    (tmp_path / f"{old}.jsonl").write_text("{}\n")
    assert session_files(tmp_path, longer) == [tmp_path / f"{old}.jsonl"]
