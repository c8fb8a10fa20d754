"""Facts a compaction summary states verbatim, read from the conversation's structure.

Which files an edit tool wrote, which command failed with which error, which tests failed last,
the agent's own plan: the tool calls and results say so exactly, so no summarizer (model or
extractive) is asked to remember them. ``actions`` turns every agent's tool calls (and text
actions) into one form; each other module reads one kind of fact from those; ``sections``
renders them within a size budget, most recent and most important first.
"""
