"""`python cli.py mcp`: the agent as an MCP server over stdio, for MCP clients (desktop apps, IDEs, other agents)."""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `mcp` subcommand."""
    from frames_agent.agent.commands import add_agent_flags

    parser = sub.add_parser("mcp", help="serve the agent as an MCP server over stdio (frames_research, search_wikipedia)")
    add_agent_flags(parser, cache=False)  # answered afresh unless --cache
    parser.set_defaults(handler=run_mcp)


@contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send fd 1 to stderr for a while: stdout is the protocol channel, and the JVM or a model may print."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def run_mcp(args: argparse.Namespace) -> int:
    """Build the agent (index, model) first, then speak MCP on stdin/stdout until the client hangs up."""
    import logging

    from frames_agent.agent.mcp.server import build_server
    from frames_agent.agent.settings import AgentSettings

    # An MCP host shows the server's stderr as its log: one INFO line per model request is noise there.
    for name in ("httpx", "httpcore", "openai"):
        logging.getLogger(name).setLevel(logging.WARNING)
    with stdout_to_stderr():
        server = build_server(AgentSettings.from_flags(vars(args)).build_agent())
    print("frames-agent MCP server ready on stdio", file=sys.stderr, flush=True)
    import anyio

    from frames_agent.agent.mcp.stdio import serve_stdio

    anyio.run(serve_stdio, server)
    return 0
