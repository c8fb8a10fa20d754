"""The two settings of a long output's reading: the window's old name still read, a job's
own ceiling checked against the setting's."""

from __future__ import annotations

import pytest

from tersify.client.options import check_options
from tersify.contract import JobOptions
from tersify.errors import InvalidJobError
from tersify.settings import Settings
from tersify.worker.model.providers.registry import unknown_names


def test_the_windows_old_name_is_still_read_and_never_warned_about(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TERSIFY_MAX_MODEL_INPUT_CHARS", "7000")
    settings = Settings()
    assert settings.model_window_chars == 7000
    assert unknown_names(settings) == []
    monkeypatch.setenv("TERSIFY_MODEL_WINDOW_CHARS", "9000")
    assert Settings().model_window_chars == 9000  # the new name wins


def test_a_job_may_read_less_than_the_ceiling_but_not_more() -> None:
    settings = Settings(model_read_max_chars=100_000)
    check_options(settings, JobOptions(model_read_max_chars=60_000))
    with pytest.raises(InvalidJobError, match="TERSIFY_MODEL_READ_MAX_CHARS"):
        check_options(settings, JobOptions(model_read_max_chars=200_000))
