"""Session log file names: one per session id, inside the log directory, never shared."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tersify.worker.store.sessionlog import file_stem, session_file

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
