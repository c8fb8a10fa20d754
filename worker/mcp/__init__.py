"""The MCP proxy: any MCP server's tools, offered unchanged, their large text results summarized.

A producer-side tool beside ``api``: it imports ``producer`` and the ``mcp`` SDK, never Celery
or the worker's internals.
"""
