"""MCP: the agent as a Model Context Protocol server (tools frames_research and search_wikipedia) on the official
`mcp` SDK; `python cli.py mcp` serves it over stdio."""
from __future__ import annotations

from typing import TYPE_CHECKING

from frames_agent.core.lazy import lazy_exports

if TYPE_CHECKING:
    from frames_agent.agent.mcp.server import build_server

# Lazy: `cli.py --help` imports this package's commands module, which must not need the optional server packages.
_EXPORTS = {"build_server": "frames_agent.agent.mcp.server"}
__all__ = ["build_server"]
__getattr__ = lazy_exports(__name__, _EXPORTS)
