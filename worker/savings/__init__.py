"""What tersify would have saved on agent sessions already run (``tersify savings``).

- ``transcript``   one session's tool outputs and model calls, whatever the agent
- ``claude_code``, ``codex``, ``messages``
                   readers of Claude Code project JSONL, Codex CLI rollout JSONL, and plain
                   OpenAI or Anthropic message lists (JSON or JSONL)
- ``reader``       finding the files, telling the formats apart, counting what cannot be read
- ``shrink``       each output as a worker would shrink it with no model (the summarizer's path)
- ``remote``       ``--model``: the outputs through the batch queue, under a cost ceiling
- ``prices``       the agent models' prices, by normalized name
- ``report``       the arithmetic and its renderings: text, JSON, CSV

A producer-side tool: submits through ``tersify.client`` and shrinks through ``summarize`` and
``shrink``; never imports Celery or the worker's job code.
"""
