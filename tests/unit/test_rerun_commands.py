"""Which runs are runs of one command: generated command lines whose volatile options differ
are one command, those whose targets differ are two (no program named)."""

from __future__ import annotations

import shlex

from hypothesis import given
from hypothesis import strategies as st

from tersify.worker.rerun.commands import VOLATILE_WORDS, normalized_command, run_key

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8)
ARGUMENT = st.one_of(
    WORD,
    st.builds(lambda a, b: f"{a}/{b}.src", WORD, WORD),
    st.builds(lambda a, b: f"--{a}={b}", WORD, WORD),
    st.builds(lambda a: f"-{a[0]}", WORD),
)
VOLATILE_WORD = st.sampled_from(sorted(VOLATILE_WORDS))


@st.composite
def command(draw: st.DrawFn) -> list[str]:
    """A program and its arguments, none of which names a volatile value."""
    words = [draw(WORD), *draw(st.lists(ARGUMENT, max_size=6))]
    clean = [w for w in words if not any(v in w for v in VOLATILE_WORDS)]
    return clean or ["program"]


@st.composite
def volatile_option(draw: st.DrawFn) -> list[str]:
    """An option whose name says its value changes between runs, with a value."""
    name = draw(VOLATILE_WORD)
    prefix = draw(st.sampled_from(["", "random-", "test-", "max_"]))
    value = draw(
        st.one_of(
            st.integers(0, 10**6).map(str),
            st.sampled_from(["30s", "1.5", "250ms"]),
            st.text(alphabet="abcdef0123456789", min_size=6, max_size=10).map(
                lambda s: f"/tmp/tmp{s}1"
            ),
        )
    )
    if draw(st.booleans()):
        return [f"--{prefix}{name}={value}"]
    return [f"--{prefix}{name}", value]


@given(command(), st.lists(volatile_option(), min_size=1, max_size=3), st.data())
def test_a_volatile_option_with_its_value_leaves_one_command(
    words: list[str], options: list[list[str]], data: st.DataObject
) -> None:
    places = [data.draw(st.integers(1, len(words))) for _ in options]
    with_them = list(words)
    for at, option in sorted(zip(places, options, strict=True), key=lambda p: -p[0]):
        with_them[at:at] = option  # from the last place back: each lands between two words
    assert run_key("shell", shlex.join(with_them)) == run_key("shell", shlex.join(words))


@given(command(), st.sampled_from(sorted(VOLATILE_WORDS)), st.integers(0, 10**6))
def test_a_volatile_variable_set_before_the_program_leaves_one_command(
    words: list[str], name: str, value: int
) -> None:
    variable = f"{name.upper()}={value}"
    assert normalized_command(shlex.join([variable, *words])) == normalized_command(
        shlex.join(words)
    )


@given(command(), WORD, WORD)
def test_arguments_that_choose_what_runs_make_another_command(
    words: list[str], one: str, other: str
) -> None:
    if one == other:
        return
    first = run_key("shell", shlex.join([*words, f"suite/{one}.src"]))
    assert first != run_key("shell", shlex.join([*words, f"suite/{other}.src"]))
    assert first != run_key("shell", shlex.join([*words, "-k", one]))


@given(command(), st.text(alphabet="abcdef0123456789", min_size=6, max_size=10))
def test_a_temporary_directory_anywhere_is_one_place(words: list[str], name: str) -> None:
    here = shlex.join(["cd", f"/tmp/tmp{name}1", "&&", *words])
    there = shlex.join(["cd", "/tmp/tmpzz99yy1", "&&", *words])
    assert run_key("shell", here) == run_key("shell", there)


def test_a_flag_with_a_volatile_name_keeps_the_argument_after_it() -> None:
    assert normalized_command("runner --random-order suite/") == "runner suite/"
    assert normalized_command("runner --seed 3 suite/") == "runner suite/"
    assert normalized_command("runner --port=8123 suite/") == "runner suite/"


def test_blanks_and_quoting_are_read_as_the_shell_reads_them() -> None:
    assert normalized_command("runner   'a b'  c") == normalized_command('runner "a b" c')
    assert normalized_command("runner 'a b' c") != normalized_command("runner a b c")
    assert normalized_command("runner 'unclosed") == "runner 'unclosed"


def test_the_tool_is_known_by_its_name_as_the_classifier_reads_it() -> None:
    assert run_key("Run_Shell", "runner a") == run_key("mcp__box__run-shell", "runner a")
    assert run_key("run-shell", "runner a") != run_key("other-tool", "runner a")


def test_a_call_without_a_command_is_no_run() -> None:
    assert run_key("shell", None) is None
    assert run_key("shell", "   ") is None
