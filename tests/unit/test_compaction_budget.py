"""A model compaction: the facts appended verbatim, the size limit shared, bad answers refused."""

from __future__ import annotations

from typing import Any

from tersify.chat.compaction import CompactionJob, CompactionMethod
from tersify.contract import FallbackReason
from tersify.settings import Settings
from tersify.worker.compaction.compact import compact
from tersify.worker.compaction.summary import END_MARKER, finish, problems
from tersify.worker.model.calls import Route
from tersify.worker.model.guard import CallGuard
from tersify.worker.model.providers.base import Completion, ModelRequest
from tests.chat import bash_steps
from tests.unit.test_compaction import FixedProvider, job, run

Msg = dict[str, Any]
ERROR = "KeyError: 'currency'"


def session(rounds: int = 12) -> list[Msg]:
    """An agent session: edits to a file and a failing test run among many listing calls."""
    messages: list[Msg] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Support invoices in euros."},
    ]
    steps = [("sed -i 's/usd/eur/' billing/invoice.py", "")]
    steps += [("pytest -q", f"E   {ERROR}\nFAILED tests/test_invoice.py::test_euro - {ERROR}")]
    names = [f"{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(rounds)]
    steps += [
        (f"sed -i 's/a/b/' billing/mod_{n}.py && python -m billing.mod_{n}",
         "\n".join(f"line {j}" for j in range(60)) + f"\nModuleNotFoundError: No module named {n}")
        for n in names
    ]  # fmt: skip
    messages += bash_steps(steps)
    return [*messages, {"role": "user", "content": "Status?"}]


class CountingProvider(FixedProvider):
    """Answers a fixed text and reports how many tokens it used."""

    def __init__(self, text: str, output_tokens: int) -> None:
        super().__init__(text)
        self.output_tokens = output_tokens

    def complete(self, request: ModelRequest, timeout: float) -> Completion:
        self.requests.append((request, timeout))
        return Completion(text=self.text, model=self.model, output_tokens=self.output_tokens)


def test_the_facts_follow_the_models_narrative_verbatim_and_replace_its_copies() -> None:
    answer = "## Goal\nEuro invoices.\n## Files Changed\n- made up.py\n## Next Steps\nFix the test."
    provider = FixedProvider(answer)
    result = run(job(session(), protect_first=2, protect_last=1), provider)
    assert result.method is CompactionMethod.LLM
    summary = result.summary
    assert "## Goal\nEuro invoices." in summary and "## Next Steps\nFix the test." in summary
    assert "made up.py" not in summary  # the model's own Files Changed section is replaced
    assert "## Files Changed\n- billing/mod_la.py: sed -i\n" in summary  # latest first
    assert "\n- billing/invoice.py: sed -i\n" in summary
    assert f"\n- {ERROR} ← `pytest -q`" in summary
    assert summary.index("## Next Steps") < summary.index("## Files Changed")
    assert summary.rstrip().endswith(END_MARKER)
    request = provider.requests[0][0]
    assert "## Files Changed" in request.user and "Keep the summary under " in request.user


def test_an_answer_cut_off_at_its_token_limit_is_refused_for_the_fallback() -> None:
    provider = CountingProvider("## Goal\nEuro invoices and then the model ran out of", 2048)
    result = run(job(session(), protect_first=2, protect_last=1), provider)
    assert result.method is CompactionMethod.FALLBACK
    assert result.fallback_reason is FallbackReason.MALFORMED
    assert "cut off" in (result.fallback_detail or "")
    assert "\n- billing/invoice.py: sed -i\n" in result.summary


def test_a_narrative_that_leaves_the_facts_no_room_is_refused_and_the_limit_holds() -> None:
    provider = FixedProvider("## Goal\n" + "words " * 1400)  # 8,400 chars: over any share of 6,000
    result = run(job(session(), protect_first=2, protect_last=1), provider)
    assert (result.method, result.fallback_reason) == ("fallback", FallbackReason.OVERSIZED)
    assert len(result.summary) <= Settings().compaction_summary_max_chars


def test_a_smaller_limit_gives_a_smaller_summary_with_the_files_still_in_it() -> None:
    messages = session(rounds=40)
    big = run(job(messages, protect_first=2, protect_last=1), None)
    small = run(
        job(messages, protect_first=2, protect_last=1), None, compaction_summary_max_chars=2000
    )
    assert len(small.summary) <= 2000 < len(big.summary)
    assert "## Files Changed\n- billing/mod_nb.py\n- billing/mod_mb.py\n" in small.summary  # brief
    assert " more\n" in small.summary


def test_a_request_kept_beside_the_summary_is_quoted_short_in_the_active_task() -> None:
    long_ask = "Please look at this failure log and fix it:\n" + "trace line\n" * 400
    messages = [*session()[:-1], {"role": "user", "content": long_ask}]
    routes = [Route(FixedProvider(), CallGuard())]
    built = CompactionJob.build(
        deadline_seconds=30, session_id="s", messages=messages, protect_first=2, protect_last=1
    )
    result = compact(built, routes, Settings())
    assert result.messages[-1]["content"] == long_ask  # kept verbatim in the tail
    assert "> Support invoices in euros." in result.summary  # a short one is quoted whole
    assert "(quoted in full in the messages kept beside this summary)" in result.summary
    assert long_ask not in result.summary


def test_a_summary_is_refused_when_it_lacks_its_structure_its_facts_or_fits_no_limit() -> None:
    facts = "## Files Changed\n- a.py: edited"
    good = finish(f"## Goal\nShip it.\n\n{facts}", ["the ask"])
    assert problems(good, 6000, ["the ask"], facts) == []
    assert problems(good.replace(facts, "## Files Changed\n- b.py"), 6000, ["the ask"], facts) == [
        "the facts sections are not in the summary verbatim"
    ]
    assert problems(good.replace(END_MARKER, ""), 6000, ["the ask"]) == [
        "the summary does not end with the end marker"
    ]
    assert problems(good.replace("## Active Task\n", "## Task\n"), 6000, ["the ask"]) == [
        "the summary has no Active Task section"
    ]
    assert problems(good, 100, ["the ask"])[0].startswith(f"the summary has {len(good)} chars")


def test_the_narrative_is_checked_against_the_facts_and_only_what_it_dropped_is_appended() -> None:
    states = f"The run failed with {ERROR} and billing/invoice.py was changed."
    copied = "## Errors\n- ModuleNotFoundError: No module named la"  # its own copy: replaced
    provider = FixedProvider(f"## Goal\nEuro invoices.\n## Progress\n{states}\n{copied}")
    result = run(job(session(), protect_first=2, protect_last=1), provider)
    assert result.method is CompactionMethod.LLM
    summary = result.summary
    assert f"- {ERROR} ←" not in summary  # the narrative states it: not repeated
    assert "- ModuleNotFoundError: No module named la ←" in summary  # only in its dropped copy
    assert "- ModuleNotFoundError: No module named aa ←" in summary  # dropped: appended
    assert "\n- billing/invoice.py: sed -i\n" in summary  # the files changed stay whole
    assert summary.count(ERROR) == 1
