"""The MCP server: frames_research runs the multi-step agent (progress per step), search_wikipedia one BM25 search;
both reply with text and with structured content matching their output schema."""
from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from frames_agent.agent.api import FramesAgent
from frames_agent.agent.config import AgentConfig
from frames_agent.agent.errors import AgentError
from frames_agent.agent.limits import MAX_QUESTION_CHARS, MAX_SEARCH_HITS, check_hits, check_text
from frames_agent.agent.state import TokenUsage, progress_line
from frames_agent.agent.tools import tool_text
from frames_agent.core.errors import FramesAgentError
from frames_agent.core.terminal import valid_data, valid_text
from frames_agent.core.version import __version__

_SNIPPET_CHARS = 600
_SOURCES = 5
INSTRUCTIONS = ("frames_research answers a factual question by searching Wikipedia over several steps (slow: "
                "one to a few minutes; progress is reported per step); search_wikipedia returns the top articles "
                "for one keyword query (fast).")


def _bounded(name: str) -> Any:
    """An AgentConfig field's description and range, advertised in the schema (the tool checks them: one-line refusals)."""
    low, high = AgentConfig.bounds(name).values()
    return Field(description=f"{AgentConfig.model_fields[name].description} ({low}-{high}; default: the server's setting)",
                 json_schema_extra={"minimum": low, "maximum": high})


def _text(description: str) -> Any:
    """A text argument with its length limits in the schema (checked by agent.limits.check_text)."""
    return Field(description=description, json_schema_extra={"minLength": 1, "maxLength": MAX_QUESTION_CHARS})


class Source(BaseModel):
    """A document behind an answer or a search hit."""

    id: str
    title: str
    score: float = 0.0
    text: str = Field("", description="the start of the text (search hits only)")


class StepSummary(BaseModel):
    """What one research step searched for and added."""

    step: int
    queries: list[str]
    new_doc_ids: list[str]


class Research(BaseModel):
    """frames_research's structured result."""

    question: str
    answer: str
    sources: list[Source] = Field(description="the documents read, first added first (the top ones)")
    steps: list[StepSummary]
    llm_calls: int
    tokens: TokenUsage
    seconds: float
    error: str | None = None


class Hits(BaseModel):
    """search_wikipedia's structured result."""

    hits: list[Source]


def tool_result(text: str, structured: BaseModel) -> CallToolResult:
    """A tool's reply as text and structured content, valid whatever text the model or the index gave."""
    return CallToolResult(content=[TextContent(type="text", text=valid_text(text))],
                          structured_content=valid_data(structured.model_dump(mode="json")))


@contextmanager
def reported() -> Iterator[None]:
    """Our one-line errors reach the client as tool errors (the SDK hides other exceptions' text)."""
    try:
        yield
    except FramesAgentError as exc:
        raise ToolError(valid_text(str(exc))) from None


def build_server(agent: FramesAgent, name: str = "frames-agent") -> MCPServer:
    """An MCP server exposing one agent; search_wikipedia needs the agent to have a retriever."""
    server = MCPServer(name, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(name="frames_research", title="Research a question in Wikipedia",
                 annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True, idempotent_hint=False))
    async def frames_research(
            question: Annotated[str, _text("the question to research, in plain words")],
            ctx: Context,
            k: Annotated[int | None, _bounded("k")] = None,
            n: Annotated[int | None, _bounded("n")] = None) -> Annotated[CallToolResult, Research]:
        """Research a factual question in Wikipedia: k search queries per step, n steps; returns the answer and sources."""
        with reported():
            question = check_text(question)  # the limits of every entry point (agent.limits)
            runner = agent.with_settings(k=k, n=n)
            total, done = 3 * runner.config.n + 1, 0  # each step: started, queries, documents added; then the answer
            async for event in runner.astream(question):
                done = total if event.kind == "answer" else done + 1
                await ctx.report_progress(done, total, valid_text(progress_line(event).strip() or "answered"))
            result = event.result  # the last event is the answer
        research = Research(
            question=result.question, answer=result.answer, llm_calls=result.llm_calls, tokens=result.tokens,
            seconds=round(result.seconds, 3), error=result.error,
            sources=[Source(id=d.id, title=d.title, score=d.score) for d in result.documents[:_SOURCES]],
            steps=[StepSummary(step=s.step, queries=s.queries, new_doc_ids=s.new_doc_ids) for s in result.steps])
        return tool_result(tool_text(result, sources=_SOURCES), research)

    @server.tool(name="search_wikipedia", title="Search Wikipedia",
                 annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True))
    async def search_wikipedia(
            query: Annotated[str, _text("a keyword query, e.g. an article title or a few names")],
            k: Annotated[int, Field(description=f"articles to return (1-{MAX_SEARCH_HITS})",
                                    json_schema_extra={"minimum": 1, "maximum": MAX_SEARCH_HITS})] = 5,
    ) -> Annotated[CallToolResult, Hits]:
        """Search the Wikipedia index with a keyword query (BM25); returns the top k articles' titles, ids and text."""
        with reported():
            query, k = check_text(query, "query"), check_hits(k)
            if agent.retriever is None:
                raise AgentError("this server has no Wikipedia index (started with --tools without wiki)")
            hits = await asyncio.to_thread(agent.retriever.search, query, k)
        found = Hits(hits=[Source(id=d.id, title=d.title, score=d.score, text=d.text[:_SNIPPET_CHARS]) for d in hits])
        text = "\n\n".join(f"## {d.title} [{d.id}]\n{d.text[:_SNIPPET_CHARS]}" for d in hits)
        return tool_result(text or "no results", found)

    return server
