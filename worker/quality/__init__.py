"""Measuring the shrinks and compaction: the corpus loaders and ``tersify eval`` /
``tersify eval-compaction``.

A tool, not part of a job: may import ``summarize``, ``compaction``, ``shrink`` and below;
nothing imports it but ``cli``.
"""
