"""Measuring the shrinks, the model and compaction: the corpus loaders, the evaluation behind
``tersify eval`` (for ``--method model``, real model answers scored per case, ``modeleval``,
kept on disk, ``answers``, and totalled per model, ``modelreport``) and ``tersify
eval-compaction``.

A tool, not part of a job: may import ``summarize``, ``compaction``, ``model``, ``shrink`` and
below; nothing imports it but ``cli``.
"""
