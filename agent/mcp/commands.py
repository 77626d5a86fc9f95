"""`python cli.py mcp`: the agent as an MCP server over stdio, for MCP clients (desktop apps, IDEs, other agents)."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `mcp` subcommand."""
    from frames_agent.agent.commands import add_agent_flags

    parser = sub.add_parser("mcp", help="serve the agent as an MCP server over stdio (frames_research, search_wikipedia)")
    add_agent_flags(parser, cache=False)  # answered afresh unless --cache
    parser.set_defaults(handler=run_mcp)


def run_mcp(args: argparse.Namespace) -> int:
    """Build the agent (index, model) first, then speak MCP on stdin/stdout until the client hangs up."""
    import logging

    from frames_agent.agent.mcp.server import build_server
    from frames_agent.agent.settings import AgentSettings

    # An MCP host shows the server's stderr as its log: one INFO line per model request is noise there.
    for name in ("httpx", "httpcore", "openai"):
        logging.getLogger(name).setLevel(logging.WARNING)
    settings = AgentSettings.from_flags(vars(args))  # bad flags fail before the protocol starts
    import anyio

    from frames_agent.agent.mcp.stdio import serve_stdio

    anyio.run(serve_stdio, lambda: build_server(settings.build_agent()))
    return 0
