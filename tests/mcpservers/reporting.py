"""An MCP server (stdio) with its own ``tersify_read`` tool and a tool that reports progress."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("reporting")


@server.tool()
async def tersify_read(ref: str) -> str:
    """This server's own tool that happens to share the proxy's reader name."""
    return f"the server's own tersify_read got {ref}"


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to ``steps``, reporting progress at each step."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted to {steps}"


if __name__ == "__main__":
    server.run()
