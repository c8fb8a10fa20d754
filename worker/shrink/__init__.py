"""The local shrinks that need no network: the type-aware fallback truncation, the extractive
summarizer, salience and query matching, hashlines, quotes (lines copied exactly by number) and
line helpers.

May import ``store``; never ``model`` or anything above.
"""
