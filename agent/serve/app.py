"""The FastAPI app around one FramesAgent: ask, ask as server-sent events, OpenAI chat completions and models,
health; one access-log line per request."""
from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from pydantic import BaseModel, ConfigDict

from frames_agent.agent.api import FramesAgent
from frames_agent.agent.limits import Busy, InvalidRequest, check_text, status_of
from frames_agent.agent.nodes import PLAN_VARIABLES
from frames_agent.agent.prompts import available_prompts, load_prompt
from frames_agent.agent.serve.chat import (
    MODEL_ID,
    ChatRequest,
    check_supported,
    completion,
    completion_chunks,
    model_card,
    question_of,
)
from frames_agent.agent.serve.connections import AccessLog
from frames_agent.agent.serve.encoding import TextJSONResponse, json_text
from frames_agent.agent.serve.guard import (
    BrowserGuard,
    Gate,
    GatedStream,
    ServeSettings,
    check_token,
    read_body,
    served_hosts,
)
from frames_agent.core.errors import FramesAgentError, first_line


class AskRequest(BaseModel):
    """POST /v1/ask: a question and optional per-request k, n, n_docs and shipped prompt name."""

    model_config = ConfigDict(extra="forbid")

    question: str  # bounded by agent.limits, as on every entry point
    k: int | None = None
    n: int | None = None
    n_docs: int | None = None
    prompt: str | None = None


def planning_prompts(agent: FramesAgent) -> list[str]:
    """The shipped prompts that can plan for this agent: they ask for queries and use no variable it lacks."""
    known = PLAN_VARIABLES | set(agent.config.variables)
    prompts = {name: load_prompt(name).variables for name in available_prompts()}
    return [name for name, used in prompts.items() if "previous_queries" in used and used <= known]


def variant(agent: FramesAgent, prompts: list[str], request: AskRequest) -> FramesAgent:
    """The agent for a request's k, n, n_docs and prompt (InvalidRequest, 422, when they are out of bounds)."""
    changes = request.model_dump(include={"k", "n", "n_docs", "prompt"})
    if changes["prompt"] is not None and changes["prompt"] not in prompts:  # never a path from the network
        raise InvalidRequest(f"prompt: choose a planning prompt: {', '.join(prompts)}")
    try:
        return agent.with_settings(**changes)  # which keeps a few variants
    except FramesAgentError as exc:  # out-of-bounds values
        raise InvalidRequest(str(exc)) from None


def _sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json_text(data)}\n\n"


async def _ask_events(agent: FramesAgent, question: str) -> AsyncIterator[str]:
    try:
        async for event in agent.astream(question):
            yield _sse(event.kind, event.model_dump(mode="json"))
    except Exception as exc:  # noqa: BLE001 - headers are sent: the error is the last event, one line
        yield _sse("error", {"error": first_line(exc)})


def _guarded(app: FastAPI, settings: ServeSettings) -> None:
    """The middleware, innermost first: CORS for allowed origins, the browser guard, the access log."""
    if settings.allow_origins:  # inside the guard: only allowed origins reach it, and get CORS headers
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=settings.allow_origins, allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(BrowserGuard, hosts=served_hosts(settings.host, settings.allow_hosts),
                       origins=settings.allow_origins)
    if settings.access_log:
        app.add_middleware(AccessLog)


def create_app(agent: FramesAgent, settings: ServeSettings | None = None) -> FastAPI:
    """The HTTP app for one agent (settings default to ServeSettings.from_env())."""
    settings = settings or ServeSettings.from_env()
    app = FastAPI(title="frames-agent", summary="FRAMES multi-step retrieval agent",
                  default_response_class=TextJSONResponse)
    _guarded(app, settings)
    gate, prompts = Gate(settings.max_concurrency, settings.retry_after), planning_prompts(agent)

    @app.exception_handler(FramesAgentError)
    async def agent_failed(request: Request, exc: FramesAgentError) -> TextJSONResponse:
        headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, Busy) else None
        return TextJSONResponse({"detail": first_line(exc)}, status_of(exc), headers=headers)

    @app.exception_handler(Exception)
    async def failed(request: Request, exc: Exception) -> TextJSONResponse:
        # A bug or a reply nothing above expected: one JSON line for the client, never a text/plain traceback.
        return TextJSONResponse({"detail": f"internal error: {type(exc).__name__}"}, 500)

    async def admit(request: Request, model: type[BaseModel]) -> Any:
        check_token(request, settings)
        return await read_body(request, model, settings.max_body_bytes)

    @app.get("/healthz")
    async def healthz() -> dict:
        return {"status": "ok", "busy": gate.busy, "capacity": gate.size}

    @app.get("/v1/models")
    async def list_models(request: Request) -> dict:
        check_token(request, settings)
        return {"object": "list", "data": [model_card()]}

    @app.get("/v1/models/{model}")
    async def get_model(model: str, request: Request) -> TextJSONResponse:
        check_token(request, settings)
        if model != MODEL_ID:
            return TextJSONResponse({"detail": f"no model {model!r}; this server answers as {MODEL_ID}"}, 404)
        return TextJSONResponse(model_card())

    @app.post("/v1/ask")
    async def ask(request: Request) -> TextJSONResponse:
        body: AskRequest = await admit(request, AskRequest)
        question, runner = check_text(body.question), variant(agent, prompts, body)
        gate.enter()
        try:
            result = await runner.ainvoke(question)
        finally:
            gate.leave()
        return TextJSONResponse(result.model_dump(mode="json"))

    @app.post("/v1/ask/stream")
    async def ask_stream(request: Request) -> GatedStream:
        body: AskRequest = await admit(request, AskRequest)
        question, runner = check_text(body.question), variant(agent, prompts, body)
        gate.enter()
        return GatedStream(gate, _ask_events(runner, question))

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        body: ChatRequest = await admit(request, ChatRequest)
        check_supported(body)
        question = question_of(body)
        gate.enter()
        if body.stream:
            chunks = completion_chunks(agent.astream(question), body.model, settings.sources_in_content)
            return GatedStream(gate, chunks)
        try:
            result = await agent.ainvoke(question)
        finally:
            gate.leave()
        return TextJSONResponse(completion(result, body.model, settings.sources_in_content))

    return app
