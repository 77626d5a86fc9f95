"""MCP: the agent as a Model Context Protocol server (tools frames_research and search_wikipedia) on the official
`mcp` SDK; `python cli.py mcp` serves it over stdio.

    from agent.mcp import build_server
"""
from agent.mcp.server import build_server

__all__ = ["build_server"]
