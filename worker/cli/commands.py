"""Every ``tersify`` command: its name, the module that builds it, the line ``--help`` lists.

Only the module of the command being run is imported (``tersify.worker.cli.main``): a command
that serves HTTP or scores a corpus never slows down every other command's start.
"""

from __future__ import annotations

from typing import Final

COMMANDS: Final[dict[str, tuple[str, str]]] = {
    "api": ("api", "serve the HTTP API (FastAPI on uvicorn)"),
    "cancel": ("cancel", "cancel a queued or running job"),
    "compact": ("compact", "compact a conversation's older turns into one summary"),
    "deadletters": ("deadletters", "list, show, replay or purge refused queue entries"),
    "demo": ("demo", "run the bundled examples end to end on a private Redis"),
    "doctor": (
        "doctor",
        "check the configuration: Redis, providers and keys, model APIs, webhooks, logs",
    ),
    "eval": ("eval", "score a shrink method over a corpus (NAME.txt + NAME.json per case)"),
    "eval-compaction": (
        "eval_compaction",
        "score compaction over real conversations (NAME.json + NAME.messages.json)",
    ),
    "eval-reruns": (
        "eval_reruns",
        "score change summaries over consecutive runs of one command (NAME.json + NAME.N.txt)",
    ),
    "forget": ("forget", "delete a session's jobs, outputs, results, held input and log files"),
    "gate": ("gate", "inspect a session's input gate"),
    "gateway": (
        "gateway",
        "serve the Anthropic and OpenAI APIs with large tool results summarized",
    ),
    "mcp-proxy": ("mcp_proxy", "serve an MCP server's tools with their long results summarized"),
    "output": ("output", "print lines of a result's full output (by output_ref)"),
    "repair": ("repair", "drop unanswered tool calls and orphan results from a conversation"),
    "reprocess": ("reprocess", "re-summarize archived session logs (batch queue)"),
    "result": ("submit", "print a job's result"),
    "savings": ("savings", "tokens and dollars tersify would have saved on agent logs"),
    "status": ("status", "queues, workers, gated sessions and recent failures"),
    "submit": ("submit", "submit a tool output and print its summary"),
    "worker": ("worker", "run a Celery worker"),
}
"""Command name → (module of ``tersify.worker.cli``, one line of help)."""


def summary(name: str) -> str:
    """The line ``tersify --help`` shows for the command ``name``."""
    return COMMANDS[name][1]
