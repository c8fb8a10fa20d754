"""A service's log is a program's report (CommandOutput) by its shape, whatever read it: not
search results for its clock times, not a CSV for its millisecond commas, not a file."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.classify import classify
from tersify.contract import ToolType
from tests.applogs import STAMPS, app_log

# How an agent gets a log: a shell with no command, a file reader, a command the tables do
# not know, a known program's unknown subcommand.
READERS = [
    ("bash", None),
    ("Read", None),
    ("cat", None),
    ("bash", "cat current"),
    ("bash", "journalctl -u billing --since today"),
    ("bash", "kubectl logs billing-0"),
    ("bash", "ssh web-1 tail -n 100000 /srv/billing/current"),
    ("fetch_service_logs", None),
]


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(sorted(STAMPS)),
    st.sampled_from(READERS),
    st.integers(min_value=40, max_value=4_000),
    st.integers(min_value=0, max_value=6),
    st.integers(min_value=0),
)
def test_a_time_stamped_log_is_command_output_whatever_read_it(
    stamp: str, reader: tuple[str, str | None], lines: int, tracebacks: int, seed: int
) -> None:
    log = app_log(lines, STAMPS[stamp], seed=seed, tracebacks=min(tracebacks, lines // 40))
    assert classify(reader[0], reader[1], log) is ToolType.COMMAND_OUTPUT


def test_search_hits_and_csv_rows_with_times_keep_their_kinds() -> None:
    hits = "".join(f"src/app/module_{i}.py:{i * 7}:    started = time.time()\n" for i in range(80))
    assert classify("bash", None, hits) is ToolType.SEARCH_RESULTS
    rows = "when,level,path,status\n" + "".join(
        f"2026-03-01 12:00:{i % 60:02d},INFO,/api/items/{i},200\n" for i in range(80)
    )
    assert classify("bash", "python export.py", rows) is ToolType.STRUCTURED_DATA
