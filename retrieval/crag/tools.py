"""LangChain tools over the CRAG mock API (typed arguments, results as Documents), as a --tools spec selects them."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, create_model

from frames_agent.retrieval.crag.client import CRAGClient
from frames_agent.retrieval.crag.endpoints import BY_NAME, DOMAINS, CRAGError, Endpoint, select_endpoints
from frames_agent.retrieval.crag.render import CAP, render
from frames_agent.retrieval.types import Document


class CRAGToolError(CRAGError, ToolException):
    """A CRAG tool call failed; the agent records it in the step and goes on."""


def args_model(ep: Endpoint) -> type[BaseModel]:
    """The pydantic argument schema the LLM sees for an endpoint."""
    fields: dict[str, Any] = {}
    for p in ep.params:
        type_ = Literal[p.choices] if p.choices else p.type
        default = ... if p.required else p.default
        fields[p.name] = (type_, Field(default, description=p.description))
    # Models often write a year or a ticker-like id as a number; the API wants a string there.
    return create_model(f"{ep.name}_args", __config__=ConfigDict(coerce_numbers_to_str=True), **fields)


def call_id(ep: Endpoint, body: dict[str, Any] | None) -> str:
    """crag:<endpoint>:<hash of the canonical request body>: equal calls get equal ids, so the context dedups them."""
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return f"crag:{ep.name}:{hashlib.sha1(canonical.encode()).hexdigest()[:12]}"


def result_document(ep: Endpoint, args: dict[str, Any], reply: dict[str, Any], cap: int = CAP) -> Document:
    """A tool result as a context Document (source crag:<endpoint>)."""
    doc_id = call_id(ep, ep.body(args))
    shown = ", ".join(f"{p.name}={json.dumps(args.get(p.name), ensure_ascii=False)}" for p in ep.params)
    return Document(id=doc_id, article_id=doc_id, title=f"{ep.name}({shown})", text=render(ep.name, reply.get("result"), cap),
                    source=f"crag:{ep.name}")


def make_tool(client: CRAGClient, ep: Endpoint, cap: int = CAP) -> StructuredTool:
    """One endpoint as a StructuredTool: the result as text, the Document as its artifact; failures raise CRAGToolError."""

    def run(**kwargs: Any) -> tuple[str, Document]:
        args = {p.name: kwargs.get(p.name, None if p.required else p.default) for p in ep.params}
        try:
            reply = client.post(ep, ep.body(args))
        except CRAGError as exc:
            raise CRAGToolError(str(exc)) from None
        doc = result_document(ep, args, reply, cap)
        return doc.text, doc

    return StructuredTool.from_function(func=run, name=ep.name, description=ep.description, args_schema=args_model(ep),
                                        response_format="content_and_artifact", tags=["crag", ep.domain],
                                        metadata={"domain": ep.domain, "path": ep.path})


def crag_tools(client: CRAGClient, domains: str | Sequence[str] | None = "all", cap: int = CAP) -> list[StructuredTool]:
    """Tools for the given domains (open, movie, finance, music, sports) and/or endpoint names; "all" = 38 tools."""
    return [make_tool(client, ep, cap) for ep in select_endpoints(domains)]


def build_tools(spec: str, client: CRAGClient | None = None) -> tuple[bool, list]:
    """(use the Wikipedia retriever?, CRAG tools) for a --tools spec (e.g. "wiki,crag:finance"); client: CRAG_SERVER's."""
    use_wiki = False
    crag: str | list[str] | None = None
    parts = [p.strip() for p in (spec or "").split(",") if p.strip()]
    if not parts:
        raise CRAGError("--tools is empty; use e.g. wiki, crag, wiki,crag or crag:finance")
    for part in parts:
        if part in ("wiki", "none"):
            use_wiki = use_wiki or part == "wiki"
        elif part == "crag":
            crag = "all"
        elif part.startswith("crag:") and part[5:] in (*DOMAINS, *BY_NAME):
            crag = crag if crag == "all" else [*(crag or []), part[5:]]
        else:
            raise CRAGError(f"unknown tool {part!r} in --tools; use wiki, crag, crag:<domain> "
                            f"({', '.join(DOMAINS)}) or crag:<endpoint>")
    return use_wiki, [] if crag is None else crag_tools(client or CRAGClient(), crag)
