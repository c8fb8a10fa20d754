"""Job → summary: the summarizer (model, extractive or fallback), its prompts and the numbered
view of the output they carry, the model's answers read and checked, the grounding check of
their prose and the summary cache.

May import ``model``, ``shrink`` and ``store``.
"""
