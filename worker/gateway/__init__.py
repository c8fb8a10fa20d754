"""The model-API gateway (``tersify gateway``): agents that take a base URL get tersify for all
of their tools.

It sits between an agent and its model API (Anthropic Messages, OpenAI Chat Completions and
Responses), replaces the large tool results of each request by their summaries — submitted and
waited for through ``AsyncProducer`` like any producer's jobs — and forwards everything else as
the client sent it, streamed responses relayed as they arrive.

- ``spans``        values located in the raw JSON, spliced without re-serializing
- ``formats``      the three wire formats: where tool results, their calls and the query sit
- ``sessions``     the session of a request: a header, else derived from the conversation
- ``replacement``  the text that stands for a tool result, naming how to read it whole
- ``store``        replacements kept in Redis by content, and the per-session counts
- ``rewrite``      a request's tool results summarized (new, reused, or fallen back)
- ``upstream``     forwarding to the provider and relaying its answer
- ``app``          the ASGI app that ties them together; ``metrics`` its Prometheus counters

A producer-side tool: imports ``producer``, ``worker.model``'s token estimate and prices, and
``worker.runtime.logconfig``; never Celery or the worker's job code.
"""
