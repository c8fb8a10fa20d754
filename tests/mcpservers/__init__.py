"""Small MCP servers the proxy's tests put behind it."""
