"""The parts of a run's output that change between identical runs, marked before lines are
compared: generated values in generated lines, never one program's output."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tersify.worker.rerun.diff import run_lines
from tersify.worker.rerun.volatile import normalized_line, normalized_lines, volatile_path

WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=10)
DIGITS = st.integers(min_value=0, max_value=10**9)


@st.composite
def clock_time(draw: st.DrawFn) -> str:
    h, m, s = draw(st.integers(0, 23)), draw(st.integers(0, 59)), draw(st.integers(0, 59))
    frac = draw(st.sampled_from(["", ".123", ",5", ".000001"]))
    return f"{h:02d}:{m:02d}:{s:02d}{frac}"


@st.composite
def timestamp(draw: st.DrawFn) -> str:
    y, mo, d = draw(st.integers(1990, 2099)), draw(st.integers(1, 12)), draw(st.integers(1, 28))
    zone = draw(st.sampled_from(["", "Z", "+02:00", "-0500"]))
    sep = draw(st.sampled_from(["T", " "]))
    return f"{y:04d}-{mo:02d}-{d:02d}{sep}{draw(clock_time())}{zone}"


@st.composite
def duration(draw: st.DrawFn) -> str:
    whole = draw(st.integers(0, 9999))
    frac = draw(st.sampled_from(["", ".5", ".01", ".123"]))
    unit = draw(st.sampled_from(["s", "ms", " s", " sec", " seconds", "us", "min", "h"]))
    return f"{whole}{frac}{unit}"


@st.composite
def address(draw: st.DrawFn) -> str:
    return hex(draw(st.integers(0x10000, 2**64 - 1)))


@st.composite
def hex_id(draw: st.DrawFn) -> str:
    body = draw(st.text(alphabet="0123456789abcdef", min_size=6, max_size=38))
    return f"a{body}7"  # a letter and a digit: an id, not a number or a word


@st.composite
def temp_path(draw: st.DrawFn) -> str:
    name = draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=6, max_size=12))
    root = draw(st.sampled_from(["/tmp/", "/var/tmp/", "/private/tmp/"]))
    return f"{root}{name}9"


KINDS = (timestamp(), clock_time(), duration(), address(), hex_id(), temp_path())
PAIRS = st.one_of(*(st.tuples(kind, kind) for kind in KINDS))


@given(st.lists(WORDS, min_size=1, max_size=6), PAIRS)
def test_lines_that_differ_only_in_volatile_parts_read_alike(
    words: list[str], values: tuple[str, str]
) -> None:
    template = " ".join(words) + " {} " + " ".join(reversed(words))
    first, second = (normalized_line(template.format(value)) for value in values)
    assert first == second
    assert first.startswith(" ".join(words))


@given(timestamp(), timestamp(), duration(), duration())
def test_a_clock_and_a_duration_are_marks_wherever_they_stand(
    one: str, two: str, took: str, took_again: str
) -> None:
    line = "[{}] step done in {}"
    assert normalized_line(line.format(one, took)) == normalized_line(line.format(two, took_again))


@given(address(), address(), hex_id(), hex_id(), temp_path(), temp_path())
def test_addresses_ids_and_temporary_paths_are_marks(
    a1: str, a2: str, i1: str, i2: str, t1: str, t2: str
) -> None:
    line = "object at {} built {} in {}/work/file.txt"
    assert normalized_line(line.format(a1, i1, t1)) == normalized_line(line.format(a2, i2, t2))
    assert "/work/file.txt" in normalized_line(line.format(a1, i1, t1))


@given(DIGITS, DIGITS, st.integers(1, 65535), st.integers(1, 65535), st.integers(0, 100))
def test_process_ids_seeds_ports_and_progress_are_marks(
    pid: int, seed: int, port: int, other_port: int, percent: int
) -> None:
    line = "worker pid={} seed: {} listening on 127.0.0.1:{} [{:3d}%]"
    alike = normalized_line(line.format(pid, seed, port, percent))
    assert alike == normalized_line(line.format(pid + 1, seed + 7, other_port, 100 - percent))


@given(st.integers(0, 10_000), st.integers(0, 10_000))
def test_counts_are_never_marks(failed: int, passed: int) -> None:
    line = f"== {failed} failed, {passed} passed in 1.5s =="
    assert normalized_line(line) == f"== {failed} failed, {passed} passed in <dur> =="


@given(st.integers(1, 99_999), st.integers(1, 99_999), st.integers(1, 200))
def test_a_place_in_a_file_moves_without_making_another_line(
    line: int, moved: int, column: int
) -> None:
    report = "src/module.ext:{}:{}: unknown name 'value'"
    assert normalized_line(report.format(line, column)) == normalized_line(
        report.format(moved, column)
    )
    assert normalized_line("raised at line 12, in f") == normalized_line("raised at line 40, in f")


@given(st.text(max_size=400))
def test_every_line_of_the_output_keeps_its_place(text: str) -> None:
    assert len(normalized_lines(text)) == len(run_lines(text))


def test_a_command_word_loses_only_its_temporary_path_and_port() -> None:
    assert volatile_path("/tmp/tmpab12cd9/out.txt") == "<tmp>/out.txt"
    assert volatile_path("127.0.0.1:8123") == "127.0.0.1:<port>"
    assert volatile_path("a1b2c3d4e5") == "a1b2c3d4e5"  # a commit chooses what a command shows
    assert volatile_path("src/file.ext:12") == "src/file.ext:12"
