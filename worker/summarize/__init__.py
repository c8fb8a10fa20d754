"""Job → summary: the summarizer (model, extractive or fallback), its prompts, the grounding
check of model answers and the summary cache.

May import ``model``, ``shrink`` and ``store``.
"""
