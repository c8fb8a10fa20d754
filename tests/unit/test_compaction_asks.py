"""The user's requests: found by shape in any envelope, condensed, every one in Task State."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tersify.chat.messages import Turn, parse
from tersify.worker.compaction.facts.asks import asks, is_request, relayed, unwrapped
from tersify.worker.compaction.facts.sections import render, sections
from tersify.worker.compaction.summary import open_requests
from tests.chat import call, result

Msg = dict[str, Any]
NAMES = st.from_regex(r"[a-z]{3,8}", fullmatch=True)


def turns_of(messages: list[Msg]) -> list[Turn]:
    return parse(messages).turns


@given(outer=NAMES, place=NAMES)
def test_a_request_in_tags_keeps_its_words_and_drops_the_context_blocks(
    outer: str, place: str
) -> None:
    text = (
        f"<{outer}>\nAdd a --dry-run flag to the deploy script\n</{outer}>\n\n"
        f"<{place}_environment_details>\n# Visible files\nsrc/a.py\n# Time\n2026-01-01\n"
        f"</{place}_environment_details>"
    )
    assert unwrapped(text) == "Add a --dry-run flag to the deploy script"
    found = asks(turns_of([{"role": "user", "content": text}]))
    assert [a.own for a in found] == ["Add a --dry-run flag to the deploy script"]


def test_a_message_of_context_blocks_alone_or_a_notice_about_the_user_is_no_request() -> None:
    assert not is_request(turns_of([{"role": "user", "content": "<context>\nx\n</context>"}])[0])
    notice = "<aborted>\nThe user interrupted the previous turn on purpose.\n</aborted>"
    assert not is_request(turns_of([{"role": "user", "content": notice}])[0])
    wish = "The user should be able to log in twice."
    assert is_request(turns_of([{"role": "user", "content": wish}])[0])


@given(tool=NAMES, tag=st.sampled_from(["feedback", "answer", "user_message", "userFeedback"]))
def test_the_users_words_a_tool_result_relays_in_a_reply_tag_are_a_request(
    tool: str, tag: str
) -> None:
    reply = f"[{tool}] Result:\nThe reply follows.\n<{tag}>\nalso cover the empty list\n</{tag}>"
    assert relayed(reply) == "also cover the empty list"
    turns = turns_of(
        [
            {"role": "user", "content": "Sort the records by date."},
            call("c1", tool, {"question": "Done?"}),
            result("c1", reply),
        ]
    )
    assert [(a.index, a.own) for a in asks(turns)] == [
        (0, "Sort the records by date."),
        (2, "also cover the empty list"),
    ]
    assert relayed("[x] Result: 3 files changed\n<output>ok</output>") == ""


def test_lines_an_earlier_request_held_are_dropped_from_the_later_ones() -> None:
    template = "Answer the questions marked in the files below.\nFollow the conventions.\n"
    turns = turns_of(
        [
            {"role": "user", "content": template + "src/a.py: why is this slow?"},
            {"role": "assistant", "content": "It copies the list."},
            {"role": "user", "content": template + "src/b.py: can this be async?"},
            {"role": "assistant", "content": "Yes."},
            {"role": "user", "content": template + "src/b.py: can this be async?"},
        ]
    )
    own = [a.own for a in asks(turns)]
    assert own[0].startswith("Answer the questions") and own[0].endswith("why is this slow?")
    assert own[1:] == ["src/b.py: can this be async?"]  # the repeat adds nothing: left out


def test_every_request_of_a_long_conversation_is_in_task_state_first_and_newest_first() -> None:
    messages: list[Msg] = []
    for n in range(40):
        ask = f"Request number {n}: make step {n} of the pipeline log its duration " + "x" * 200
        messages += [{"role": "user", "content": ask}]
        messages += [call(f"c{n}", "run", {"command": f"make step{n}"})]
        messages += [result(f"c{n}", f"error: step{n} failed with code {n}\n" * 3)]
        messages += [{"role": "assistant", "content": f"The fix is to retry step {n}."}]
    found = sections(turns_of(messages))
    tasks = next(s for s in found if s.heading == "Task State")
    assert len(tasks.lines) == 40 and tasks.lines[0].startswith("- request 1/40: Request number 0")
    assert tasks.lines[1].startswith("- request 40/40: Request number 39")
    text = render(found, 4000)
    assert len(text) <= 4000
    task_part = text.split("## Task State\n", 1)[1].split("\n\n", 1)[0]
    shown = task_part.splitlines()
    # the brief form: more requests than the full one would fit, first and newest kept
    assert shown[0].startswith("- request 1/40") and shown[1].startswith("- request 40/40")
    assert len(shown) >= 8 and all(len(line) <= 130 for line in shown)
    assert shown[-1].startswith("- … ") and shown[-1].endswith("more")


def test_errors_and_commands_are_said_briefly_when_their_full_lines_do_not_fit() -> None:
    messages: list[Msg] = [{"role": "user", "content": "Make the build pass."}]
    words = [a + b for a in "klmnpr" for b in ("ab", "ix", "od", "uz", "el")]
    for n, word in enumerate(words):
        command = f"make {word} " + " ".join(f"--option-{j}=value" for j in range(12))
        messages += [call(f"c{n}", "shell", {"command": command})]
        messages += [result(f"c{n}", f"error: no rule to make {word}\nExit code: 2")]
    found = sections(turns_of(messages))
    errors = next(s for s in found if s.heading == "Errors")
    assert "← `make rel" in errors.lines[0]
    text = render(found, 3000)
    assert len(text) <= 3000
    shown = text.split("## Errors\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert shown[0] == "- error: no rule to make rel"  # the command that showed it left out
    assert len(shown) > 8
    commands = text.split("## Commands\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert all(len(line) < 110 for line in commands)


def test_a_reply_relayed_by_a_tool_result_ends_the_agents_turn_and_is_the_open_request() -> None:
    turns = turns_of(
        [
            {"role": "user", "content": "<task>\nSort the records by date.\n</task>\n"
             "<environment_details>\n# Open tabs\na.py\n</environment_details>"},
            call("c1", "finish", {"result": "Sorted."}),
            result("c1", "[finish] Result:\n<feedback>\nnewest first, please\n</feedback>"),
            call("c2", "edit", {"path": "a.py", "new": "x"}),
            result("c2", "ok"),
        ]
    )  # fmt: skip
    assert open_requests(turns) == ["newest first, please"]
    assert open_requests(turns[:1]) == ["Sort the records by date."]  # its own words only
    assert relayed("a listing: <feedback>not a reply</feedback>") == ""  # not opening a line
