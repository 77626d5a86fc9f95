"""The MCP server: frames_research runs the multi-step agent, search_wikipedia one BM25 search."""
from __future__ import annotations

import asyncio
from contextlib import contextmanager
from typing import Iterator

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from agent.api import FramesAgent, tool_text
from agent.errors import AgentError
from agent.limits import check_hits, check_text
from retrieval.errors import FramesAgentError

_SNIPPET_CHARS = 600
INSTRUCTIONS = ("frames_research answers a factual question by searching Wikipedia over several steps (slow: "
                "one to a few minutes); search_wikipedia returns the top articles for one keyword query (fast).")


def render_hits(hits: list) -> str:
    """Search hits as text: title, id and the start of each article."""
    if not hits:
        return "no results"
    return "\n\n".join(f"## {d.title} [{d.id}]\n{d.text[:_SNIPPET_CHARS]}" for d in hits)


@contextmanager
def reported() -> Iterator[None]:
    """Our one-line errors reach the client as tool errors (the SDK hides other exceptions' text)."""
    try:
        yield
    except FramesAgentError as exc:
        raise ToolError(str(exc)) from None


def build_server(agent: FramesAgent, name: str = "frames-agent") -> MCPServer:
    """An MCP server exposing one agent; search_wikipedia needs the agent to have a retriever."""
    server = MCPServer(name, instructions=INSTRUCTIONS)

    @server.tool(name="frames_research", structured_output=False)
    async def frames_research(question: str, k: int | None = None, n: int | None = None) -> str:
        """Research a factual question in Wikipedia: k search queries per step, n steps; returns the answer and sources."""
        with reported():
            question = check_text(question)  # the limits of every entry point (agent.limits)
            result = await agent.with_settings(k=k, n=n).ainvoke(question)
        return tool_text(result, sources=5)

    @server.tool(name="search_wikipedia", structured_output=False)
    async def search_wikipedia(query: str, k: int = 5) -> str:
        """Search the Wikipedia index with a keyword query (BM25); returns the top k articles' titles, ids and text."""
        with reported():
            query, k = check_text(query, "query"), check_hits(k)
            if agent.retriever is None:
                raise AgentError("this server has no Wikipedia index (started with --tools without wiki)")
            return render_hits(await asyncio.to_thread(agent.retriever.search, query, k))

    return server
