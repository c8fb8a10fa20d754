"""Re-runs told as what changed: which runs are runs of one command (``commands``), the parts of
an output that change without meaning anything (``volatile``), two runs' lines matched
(``diff``), the change summary written (``change``) or asked of the model (``prompt``), the
choice between it and a summary on its own (``summary``) and the session's latest runs in Redis
(``history``).

May import ``summarize``, ``model``, ``shrink``, ``store`` and ``redact``.
"""
