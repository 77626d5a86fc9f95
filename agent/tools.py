"""Tools as plug-ins: any LangChain tool whose results enter the context as documents."""
from __future__ import annotations

import hashlib
import json
from typing import Any, Sequence

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from agent.state import ToolCall
from retrieval.types import Document

_MAX_RESULT_CHARS = 2000


def call_key(name: str, args: dict[str, Any]) -> str:
    """A stable id for a tool call, so equal calls dedup in the context."""
    canonical = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
    return f"tool:{name}:{hashlib.sha1(canonical.encode()).hexdigest()[:12]}"


def as_documents(call: ToolCall, result: Any) -> list[Document]:
    """A tool's result as context documents; tools that return Documents keep theirs."""
    if isinstance(result, Document):
        return [result]
    if isinstance(result, list) and result and all(isinstance(r, Document) for r in result):
        return list(result)
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    key = call_key(call.name, call.args)
    args = ", ".join(f"{k}={v!r}" for k, v in call.args.items())
    return [Document(id=key, title=f"{call.name}({args})", text=text[:_MAX_RESULT_CHARS], source=f"tool:{call.name}", article_id=key)]


def describe_tools(tools: Sequence[BaseTool], max_calls: int) -> str:
    """The tools section of the planning prompt (empty when there are none)."""
    if not tools or max_calls < 1:
        return ""
    lines = [f"Besides search queries you may call up to {max_calls} of these tools per step, "
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
    return as_documents(call, tool.invoke(call.args, config=config))
