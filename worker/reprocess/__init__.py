"""Batch re-summarizing of archived session logs on the ``batch`` queue (``tersify reprocess``)."""
