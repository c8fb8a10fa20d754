"""Measuring the shrinks: the corpus loader and the evaluation behind ``tersify eval``.

A tool, not part of a job: may import ``summarize``, ``shrink`` and below; nothing imports it
but ``cli``.
"""
