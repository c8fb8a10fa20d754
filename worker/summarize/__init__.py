"""Job → summary: the summarizer (model, extractive or fallback), its prompts and the numbered
view of the output they carry, the model's answers read and checked, the grounding check of
their prose, the summary cache, and an output past one request read in windows side by side
and merged (``windowed``, ``merge``; ``sending`` says what a job sends).

May import ``model``, ``shrink`` and ``store``.
"""
