"""Calling a model API: the providers (Anthropic Messages, OpenAI Chat Completions) over
httpx, and the policy around every call (guard, circuit breaker, rate limit, retries), the
route that puts a provider behind its shared guard, calls made side by side (``fanout``: a
long output's windows), pricing and the token estimate.

May import ``store``; never ``shrink`` or anything above.
"""
