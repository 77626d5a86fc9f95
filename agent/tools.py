"""Tools as plug-ins: any LangChain tool whose results enter the context as documents; the agent as a tool."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import patch_config
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from frames_agent.agent.state import ToolCall
from frames_agent.core.errors import FramesAgentError
from frames_agent.retrieval.types import Document

_MAX_RESULT_CHARS = 2000


def call_key(name: str, args: dict[str, Any]) -> str:
    """A stable id for a tool call, so equal calls dedup in the context."""
    canonical = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
    return f"tool:{name}:{hashlib.sha1(canonical.encode()).hexdigest()[:12]}"


def result_documents(call: ToolCall, result: Any) -> list[Document]:
    """A tool's result as context documents; tools that return Documents keep theirs."""
    if isinstance(result, Document):
        return [result]
    if isinstance(result, list) and result and all(isinstance(r, Document) for r in result):
        return list(result)
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    key = call_key(call.name, call.args)
    args = ", ".join(f"{k}={v!r}" for k, v in call.args.items())
    return [Document(id=key, title=f"{call.name}({args})", text=text[:_MAX_RESULT_CHARS], source=f"tool:{call.name}",
                     article_id=key)]


def describe_tools(tools: Sequence[BaseTool], max_calls: int, native: bool = False) -> str:
    """The planning prompt's tools section (empty without tools); native: the reply goes as the `plan` tool's args."""
    if not tools or max_calls < 1:
        return ""
    lines = [f"Send your JSON reply as the arguments of the plan tool. Besides it you may call up to {max_calls} of "
             "these tools per step:" if native else
             f"Besides search queries you may call up to {max_calls} of these tools per step, "
             'by adding {"name": ..., "args": {...}} objects to "tool_calls":']
    for tool in tools:
        params = ", ".join(f"{name}: {spec.get('type', 'any')}" for name, spec in tool.args.items())
        lines.append(f"- {tool.name}({params}): {tool.description.strip().splitlines()[0]}")
    return "\n".join(lines) + "\n"


def run_tool(tools: dict[str, BaseTool], call: ToolCall, config: RunnableConfig | None = None) -> list[Document]:
    """Run one tool call under the run's config (so traces show it); raises on unknown tools and failures."""
    tool = tools.get(call.name)
    if tool is None:
        raise ValueError(f"unknown tool {call.name!r}")
    if tool.response_format != "content_and_artifact":
        return result_documents(call, tool.invoke(call.args, config=config))
    # Called as a model's tool call, the tool returns a ToolMessage whose artifact is what enters the context.
    message = tool.invoke({"type": "tool_call", "name": call.name, "args": call.args,
                           "id": call_key(call.name, call.args)}, config=config)
    artifact = getattr(message, "artifact", None)
    return result_documents(call, artifact if artifact is not None else getattr(message, "content", message))


def tool_text(result: Any, sources: int = 3) -> str:
    """An agent result (AgentResult) as a tool reply: the answer, then the top sources."""
    lines = [result.answer or "(no answer)"]
    if result.error:
        lines.append(f"(error: {result.error})")
    if sources and result.documents:
        lines.append("Sources:")
        lines.extend(f"- {d.title} [{d.id}]" for d in result.documents[:sources])
    return "\n".join(lines)


class ResearchArgs(BaseModel):
    """The agent-as-a-tool's arguments."""

    question: str = Field(description="the question to research, in plain words")


ToolErrors = bool | str | Callable[[ToolException], str]


@contextmanager
def _tool_errors(handle_tool_error: ToolErrors) -> Iterator[None]:
    """Any failure inside the agent as a ToolException with one line of text, the message the outer model reads."""
    try:
        yield
    except ToolException:
        raise
    except Exception as exc:
        if handle_tool_error is False:
            raise
        first = str(exc).splitlines()[0] if str(exc).strip() else ""
        raise ToolException(first if isinstance(exc, FramesAgentError)
                            else f"{type(exc).__name__}: {first}".rstrip(": ")) from exc


def agent_tool(agent: Any, args_schema: type[BaseModel] | None = None, name: str | None = None,
               description: str | None = None, sources: int = 3, handle_tool_error: ToolErrors = True) -> BaseTool:
    """A FramesAgent as one LangChain tool (answer and top sources; the AgentResult its artifact)."""
    # Joining the caller's config and the tool run's callbacks nests the agent's trace under the tool call.
    def research(question: str, config: RunnableConfig, callbacks: Any = None) -> tuple[str, dict]:
        with _tool_errors(handle_tool_error):
            result = agent.invoke(question, config=patch_config(config, callbacks=callbacks))
        return tool_text(result, sources), result.model_dump(mode="json")

    async def aresearch(question: str, config: RunnableConfig, callbacks: Any = None) -> tuple[str, dict]:
        with _tool_errors(handle_tool_error):
            result = await agent.ainvoke(question, config=patch_config(config, callbacks=callbacks))
        return tool_text(result, sources), result.model_dump(mode="json")

    return StructuredTool.from_function(
        func=research, coroutine=aresearch, name=name or "frames_research", args_schema=args_schema or ResearchArgs,
        response_format="content_and_artifact", handle_tool_error=handle_tool_error,
        # Arguments the schema refuses (no question, a number) are the outer model's to fix, as other errors are.
        handle_validation_error=bool(handle_tool_error),
        description=description or "Research a factual question in Wikipedia over several search steps; "
                                   "returns a short answer and its top sources.")
