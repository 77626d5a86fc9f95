"""openai:<model> — any OpenAI-compatible server through langchain-openai, with errors made one-line."""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import weakref
from typing import Any, AsyncIterator, Callable, Iterator
from urllib.parse import urlsplit

import openai
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import model_validator

from agent.llm import errors as E
from agent.llm.calls import message_text

# A local server (llama.cpp, vLLM, Ollama) ignores the key but the client insists on one.
PLACEHOLDER_KEY = "not-needed"


def map_openai_error(exc: Exception, spec: str, base_url: str | None, key: str | None = None) -> Exception:
    """Our one-line error for an openai exception (others pass through)."""
    where = E.redact_url(base_url) or "api.openai.com"
    model = spec.split(":", 1)[-1]
    if isinstance(exc, ValueError) and not isinstance(exc, E.LLMError):  # a 200 reply that is not JSON (an HTML page)
        return E.ServerError(f"{spec}: {where} answered with something that is not JSON "
                             "(is it an OpenAI-compatible /v1 URL?)")
    if isinstance(exc, E.LLMError) or not isinstance(exc, openai.OpenAIError):
        return exc
    password = _url_password(base_url)
    detail = E.redact(str(getattr(exc, "message", exc)), (key or "", password))
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return E.AuthError(f"{spec}: the server rejected the API key (check OPENAI_API_KEY)")
    if isinstance(exc, openai.NotFoundError):
        return E.ModelNotFoundError(f"{spec}: model '{model}' not found at {where} (or it is not an OpenAI-compatible /v1 URL)")
    if isinstance(exc, openai.RateLimitError):
        return E.QuotaError(f"{spec}: rate limit or quota exceeded after retries: {detail}")
    if isinstance(exc, openai.APITimeoutError):
        return E.LLMTimeoutError(f"{spec}: no reply from {where} within the timeout, after retries")
    if isinstance(exc, openai.APIConnectionError):
        return E.UnreachableError(f"{spec}: cannot reach {where} (is the server running? check --base-url / OPENAI_BASE_URL)")
    if isinstance(exc, openai.InternalServerError):
        return E.ServerError(f"{spec}: server error from {where} after retries: {detail}")
    return E.LLMError(f"{spec}: request failed: {detail}")


def _url_password(url: str | None) -> str:
    try:
        return urlsplit(url or "").password or ""
    except ValueError:
        return ""


class _LoopClients:
    """One AsyncOpenAI client per event loop, copied from a template.

    An httpx connection pool is bound to the loop that opened it; langchain-openai shares one cached pool, so a
    second `asyncio.run(...)` reused a kept-alive connection of a closed loop ("Event loop is closed").
    """

    def __init__(self, template: openai.AsyncOpenAI) -> None:
        self.template = template
        self._clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def current(self) -> openai.AsyncOpenAI:
        """The client of the running loop (the template outside any loop)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return self.template
        with self._lock:
            client = self._clients.get(loop)
            if client is None:
                http = openai.DefaultAsyncHttpxClient(timeout=self.template.timeout)
                client = self._clients[loop] = self.template.copy(http_client=http)
            return client

    def set_base_url(self, url: Any) -> None:
        """Point the template and every loop's client at url (the local server picks its port late)."""
        with self._lock:
            for client in [self.template, *self._clients.values()]:
                client.base_url = url


class _PerLoop:
    """Stands in for langchain's async client attribute: every access goes to the running loop's client."""

    def __init__(self, clients: _LoopClients, select: Callable[[Any], Any]) -> None:
        object.__setattr__(self, "_clients", clients)
        object.__setattr__(self, "_select", select)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._select(self._clients.current()), name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "base_url":
            raise AttributeError(f"cannot set {name} on a per-loop client")
        self._clients.set_base_url(value)


class OpenAICompatChat(ChatOpenAI):
    """ChatOpenAI that reports one-line FramesAgentErrors and keys its cache by model spec."""

    spec: str = ""
    supports_json_schema: bool = True
    # OpenAI itself wants max_completion_tokens; most compatible servers only know max_tokens.
    legacy_max_tokens: bool = False

    @model_validator(mode="after")
    def _client_per_loop(self) -> "OpenAICompatChat":
        """Give each event loop its own async client, unless the caller supplied the HTTP client."""
        root = self.root_async_client
        if isinstance(root, openai.AsyncOpenAI) and self.http_async_client is None:
            clients = _LoopClients(root)
            self.root_async_client = _PerLoop(clients, lambda c: c)
            self.async_client = _PerLoop(clients, lambda c: c.chat.completions)
        return self

    @contextlib.contextmanager
    def _mapped_errors(self) -> Iterator[None]:
        try:
            yield
        except Exception as exc:  # noqa: BLE001 - mapped or re-raised unchanged
            key = self.openai_api_key.get_secret_value() if self.openai_api_key else None
            mapped = map_openai_error(exc, self.spec or f"openai:{self.model_name}", self.openai_api_base, key)
            if mapped is exc:
                raise
            raise mapped from None

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if "response_format" in payload:
            # Sent as a plain body field: ChatOpenAI would otherwise use the client's parse(), which
            # raises on a reply cut off at max_tokens instead of returning it for repair.
            payload["extra_body"] = {**(payload.get("extra_body") or {}), "response_format": payload.pop("response_format")}
        if self.legacy_max_tokens and "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        return payload

    def _create_chat_result(self, response: Any, generation_info: dict | None = None) -> ChatResult:
        # Some servers reply with content blocks ({"text": null}, {"text": 5}); langchain-core's
        # ChatGeneration joins block texts and raises TypeError on a non-string, so flatten them first.
        if hasattr(response, "model_dump"):
            response = response.model_dump(warnings=False)  # extra fields such as `timings` stay
        for choice in (response.get("choices") if isinstance(response, dict) else None) or []:
            message = choice.get("message") if isinstance(choice, dict) else None
            if isinstance(message, dict) and isinstance(message.get("content"), list):
                message["content"] = message_text(message["content"])
        result = super()._create_chat_result(response, generation_info)
        # llama.cpp servers time prompt reading and generation apart (`timings`); keep that for the run's records.
        timings = response.get("timings") if isinstance(response, dict) else None
        if isinstance(timings, dict):
            for generation in result.generations:
                generation.message.response_metadata["timings"] = timings
        return result

    def _get_llm_string(self, stop: list[str] | None = None, **kwargs: Any) -> str:
        """Cache key part: the spec, the server, the sampling parameters and schema; not timeouts or keys."""
        params = {k: v for k, v in self._default_params.items() if k not in ("stream", "model", "timeout")}
        # Two servers may serve a model of the same name with different answers; credentials are masked
        # because the key is stored in the cache file.
        server = E.redact_url(self.openai_api_base) or "api.openai.com"
        return json.dumps({"spec": self.spec or self.model_name, "server": server, "params": params,
                           "stop": stop, "kwargs": kwargs}, sort_keys=True, default=str)

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        with self._mapped_errors():
            return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        with self._mapped_errors():
            return await super()._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)

    def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        with self._mapped_errors():
            yield from super()._stream(messages, stop=stop, run_manager=run_manager, **kwargs)

    async def _astream(self, messages: Any, stop: Any = None, run_manager: Any = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        with self._mapped_errors():
            async for chunk in super()._astream(messages, stop=stop, run_manager=run_manager, **kwargs):
                yield chunk


def make_openai_chat(model: str, *, base_url: str | None = None, timeout: float = 120.0, max_retries: int = 3,
                     temperature: float | None = 0.0, max_tokens: int | None = None,
                     env: dict[str, str] | None = None) -> OpenAICompatChat:
    """openai:<model> against OpenAI or the OpenAI-compatible server at base_url (or OPENAI_BASE_URL)."""
    env = os.environ if env is None else env
    base_url = base_url or env.get("OPENAI_BASE_URL") or None
    key = env.get("OPENAI_API_KEY") or None
    if not model:
        raise E.ModelSpecError("openai: name a model, e.g. openai:gpt-4o-mini")
    if key is None and base_url is None:
        raise E.MissingKeyError("openai: set OPENAI_API_KEY (or give --base-url / OPENAI_BASE_URL for a local server)")
    if base_url and not base_url.startswith(("http://", "https://")):
        raise E.ModelSpecError(f"openai: base URL must start with http:// or https://, got {E.redact_url(base_url)!r}")
    # The client's own retry loop backs off exponentially on 408/409/429/5xx and timeouts,
    # honours Retry-After, and stops after max_retries.
    return OpenAICompatChat(model=model, spec=f"openai:{model}", base_url=base_url,
                            api_key=key or PLACEHOLDER_KEY, timeout=timeout, max_retries=max_retries,
                            temperature=temperature, max_tokens=max_tokens, stream_usage=True,
                            legacy_max_tokens=base_url is not None)
