"""Fixtures of the unit tests that read the fake model through the official SDKs."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import openai
import pytest

from tests.fakemodel import FakeModelServer

SDK_KEY = "test-key"
"""The API key the SDK clients send."""


@pytest.fixture
def claude(fake_model: FakeModelServer) -> Iterator[anthropic.Anthropic]:
    """The official Anthropic client, pointed at the fake, without retries."""
    with anthropic.Anthropic(base_url=fake_model.url, api_key=SDK_KEY, max_retries=0) as client:
        yield client


@pytest.fixture
def gpt(fake_model: FakeModelServer) -> Iterator[openai.OpenAI]:
    """The official OpenAI client, pointed at the fake, without retries."""
    with openai.OpenAI(
        base_url=fake_model.openai_base_url, api_key=SDK_KEY, max_retries=0
    ) as client:
        yield client
