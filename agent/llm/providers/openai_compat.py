"""openai:<model> — any OpenAI-compatible server through langchain-openai, with errors made one-line."""
from __future__ import annotations

import importlib
import json
import os
from collections.abc import Mapping
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import openai
from langchain_core.messages import AIMessage, InvalidToolCall
from langchain_core.messages.tool import invalid_tool_call
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import SecretStr, model_validator

from frames_agent.agent.llm import errors as E
from frames_agent.agent.llm.calls import message_text
from frames_agent.agent.llm.retry import RetriedChat, RetryPolicy, request_timeout, retry_after_seconds, timed_out
from frames_agent.core.bounded import JSONOutOfBounds
from frames_agent.core.http import bounded_transport, in_chain

# A local server (llama.cpp, vLLM, Ollama) ignores the key but the client insists on one.
PLACEHOLDER_KEY = "not-needed"
# Longer integers in a reply are no count or id (2**64 has 20 digits).
_MAX_INT_DIGITS = 20


def map_openai_error(exc: Exception, spec: str, base_url: str | None, key: str | None = None) -> Exception:
    """Our one-line error for an openai exception (others pass through)."""
    where = E.redact_url(base_url) or "api.openai.com"
    model = spec.split(":", 1)[-1]
    if bounds := in_chain(exc, JSONOutOfBounds):  # refused by our transport before any parser read it
        return E.MalformedReplyError(f"{spec}: {where} answered with {bounds} (not a reply)")
    if isinstance(exc, ValueError) and not isinstance(exc, E.LLMError):
        if in_chain(exc, json.JSONDecodeError):  # a 200 reply that is not JSON (an HTML page)
            return not_json(spec, where)
        # The body was JSON; what the model put in it could not be read (a tool call whose arguments are not JSON).
        detail = E.redact(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)[:300]
        return E.MalformedReplyError(f"{spec}: the model's reply could not be read: {detail}")
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
        return timed_out(f"{spec}: no reply from {where} within the timeout, after retries")
    if isinstance(exc, openai.APIConnectionError) and not _never_connected(exc):
        return E.ConnectionBrokenError(f"{spec}: the connection to {where} broke before the reply was complete")
    if isinstance(exc, openai.APIConnectionError):
        return E.UnreachableError(f"{spec}: cannot reach {where} (is the server running? check --base-url / OPENAI_BASE_URL)")
    if isinstance(exc, openai.InternalServerError) or getattr(exc, "status_code", None) in (408, 409):
        return E.ServerError(f"{spec}: server error from {where} after retries: {detail}")
    return E.LLMError(f"{spec}: request failed: {detail}")


def not_json(spec: str, where: str) -> E.MalformedReplyError:
    """The error for a reply body that is not JSON (an HTML page, a body cut off midway)."""
    return E.MalformedReplyError(f"{spec}: {where} answered with something that is not JSON "
                                 "(is it an OpenAI-compatible /v1 URL?)")


def json_kind(value: Any) -> str:
    """What a decoded JSON value is, in words ("null", "a list", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    kinds: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}
    return kinds.get(type(value), "a number")


def check_completion(response: Any, spec: str, where: str) -> None:
    """Raise the BadReplyError that fits a chat.completion body (a dict) that cannot be read as a reply."""
    if isinstance(response, str):  # the SDK hands over a body it could not read as JSON as its text
        raise not_json(spec, where)
    if not isinstance(response, dict):  # JSON, but no object: the server answered, the URL is not to blame
        raise E.MalformedReplyError(f"{spec}: {where} answered with {json_kind(response)} in JSON, not a chat completion")
    if response.get("error"):
        raise E.BadReplyError(f"{spec}: {where} answered with an error: {E.redact(str(response['error']))}")
    choices = response.get("choices")
    if choices is not None and not isinstance(choices, list):
        raise E.MalformedReplyError(f"{spec}: {where} answered with 'choices' as {json_kind(choices)}, "
                                    "not a list of choices")
    if not choices:
        raise E.EmptyChoicesError(f"{spec}: {where} answered with no choices (an empty reply, not the model's answer)")
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise E.MissingMessageError(f"{spec}: {where} answered with a choice that has no message")
        if message_text(message.get("content")).strip() or message.get("tool_calls") or message.get("function_call"):
            continue
        if message.get("refusal"):
            raise E.RefusalError(f"{spec}: the model refused: {E.redact(str(message['refusal']))}")
        if choice.get("finish_reason") == "length":
            raise E.ReplyCutOffError(f"{spec}: the reply reached its token limit before any text (raise max_tokens)")
        raise E.NullContentError(f"{spec}: the reply has no text (finish reason {choice.get('finish_reason')})")


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53


def _counts(usage: object) -> dict | None:
    """A reply's usage with whole-number counts only: a server's "eleven" must not reach the usage arithmetic."""
    if not isinstance(usage, dict):
        return None
    return {k: v for k, v in usage.items() if _whole(v) or isinstance(v, dict)} or None


def _not_object_calls(message: dict) -> list[InvalidToolCall]:
    """Takes tool calls whose JSON arguments are no object out of a message, as invalid calls the tolerant parser reads."""
    calls, bad = message.get("tool_calls"), []
    if not isinstance(calls, list):
        return []
    kept = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        try:
            decoded = json.loads(arguments) if isinstance(arguments, str) else {}
        except ValueError:
            decoded = {}  # not JSON at all: LangChain records it as an invalid call itself
        if decoded is None or isinstance(decoded, dict):
            kept.append(call)
            continue
        bad.append(invalid_tool_call(name=str(function.get("name") or ""), args=arguments,  # type: ignore[union-attr]
                                     id=str(call.get("id") or "") or None,
                                     error=f"the arguments are {json_kind(decoded)}, not a JSON object"))
    message["tool_calls"] = kept or None
    return bad


def _bounded_int(digits: str) -> int | None:
    """A JSON integer of a reply; one too long to be any count or id (a hostile usage figure) reads as null."""
    return int(digits) if len(digits) <= _MAX_INT_DIGITS else None


def _numbers_bounded(response: Any) -> None:
    """A response hook: its JSON read with over-long integers as null (Python refuses those over 4,300 digits)."""
    response.json = lambda **kwargs: json.loads(response.content, parse_int=_bounded_int, **kwargs)


async def _anumbers_bounded(response: Any) -> None:
    _numbers_bounded(response)  # httpx's async client awaits its hooks


def _never_connected(exc: BaseException) -> bool:
    """Whether the transport failed before a connection was made (refused, no such host), not midway through."""
    # By name: the SDK's transport is httpx or its successor httpx2, whose ConnectError classes differ.
    cause = exc.__cause__
    for _ in range(8):
        if cause is None or type(cause).__name__ in ("ConnectError", "ConnectionRefusedError"):
            return cause is not None
        cause = cause.__cause__
    return False


def _url_password(url: str | None) -> str:
    try:
        return urlsplit(url or "").password or ""
    except ValueError:
        return ""


def _http_module() -> ModuleType:
    """The httpx-like module the openai SDK is built on (httpx, or its successor httpx2)."""
    client = next(c for c in openai.DefaultHttpxClient.__mro__ if c.__name__ == "Client")
    return importlib.import_module(client.__module__.split(".")[0])


class OpenAICompatChat(RetriedChat, ChatOpenAI):
    """ChatOpenAI that reports one-line FramesAgentErrors and keys its cache by model spec."""

    spec: str = ""
    supports_json_schema: bool = True
    # OpenAI itself wants max_completion_tokens; most compatible servers only know max_tokens.
    legacy_max_tokens: bool = False

    @model_validator(mode="after")
    def _client_per_loop(self) -> OpenAICompatChat:
        """Our bounded HTTP clients unless the caller gave one; our retries replace the SDK's."""
        # Our transport (one serves both clients) bounds every reply and makes the timeout a total deadline.
        transport = (bounded_transport(_http_module())
                     if self.http_client is None or self.http_async_client is None else None)
        if isinstance(self.root_client, openai.OpenAI):
            own: dict[str, Any] = {} if self.http_client is not None else {"http_client": openai.DefaultHttpxClient(
                timeout=self.root_client.timeout, transport=transport, event_hooks={"response": [_numbers_bounded]})}
            self.root_client = self.root_client.with_options(max_retries=0, **own)
            self.client = self.root_client.chat.completions
        root = self.root_async_client
        if isinstance(root, openai.AsyncOpenAI):
            own_async: dict[str, Any] = {} if self.http_async_client is not None else {"http_client": (
                openai.DefaultAsyncHttpxClient(timeout=root.timeout, event_hooks={"response": [_anumbers_bounded]},
                                               transport=transport))}
            root = root.with_options(max_retries=0, **own_async)
            self.root_async_client, self.async_client = root, root.chat.completions
        return self

    def to_json(self) -> Any:
        """Serialized as LangChain's ChatOpenAI (the class load() allows): the model, server and sampling only."""
        out = super().to_json()
        if out["type"] == "constructor":
            own = set(type(self).model_fields) - set(ChatOpenAI.model_fields)
            kwargs = {k: v for k, v in out["kwargs"].items() if k not in own}
            return {**out, "id": ["langchain", "chat_models", "openai", "ChatOpenAI"], "kwargs": kwargs}
        return out

    def _policy(self) -> RetryPolicy:
        # The openai SDK's own pacing: 0.5 s doubling up to 8 s, unless the server says when (Retry-After).
        return RetryPolicy(max_retries=self.max_retries or 0, base_delay=0.5, max_delay=8.0, jitter=0.25)

    def _classify(self, exc: Exception) -> Exception:
        key = self.openai_api_key.get_secret_value() if isinstance(self.openai_api_key, SecretStr) else None
        return map_openai_error(exc, self.spec or f"openai:{self.model_name}", self.openai_api_base, key)

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if isinstance(payload.get("response_format"), dict):
            # A plain body field, not the client's parse(), which raises on a cut-off reply instead of returning it.
            payload["extra_body"] = {**(payload.get("extra_body") or {}), "response_format": payload.pop("response_format")}
        if self.legacy_max_tokens and "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        configured = self.request_timeout if isinstance(self.request_timeout, (int, float)) else None
        timeout = request_timeout(configured, self.spec or f"openai:{self.model_name}")
        if timeout is not None:
            payload["timeout"] = timeout
        return payload

    def _create_chat_result(self, response: Any, generation_info: dict | None = None) -> ChatResult:
        choices = getattr(response, "choices", None)
        message = getattr(choices[0], "message", None) if isinstance(choices, list) and choices else None
        parsed = getattr(message, "parsed", None)  # parse()'s object, for with_structured_output(Model)
        if hasattr(response, "model_dump"):  # extra fields such as `timings` stay
            response = response.model_dump(exclude={"choices": {"__all__": {"message": {"parsed"}}}}, warnings=False)
        check_completion(response, self.spec or f"openai:{self.model_name}",
                         E.redact_url(self.openai_api_base) or "api.openai.com")
        response["usage"] = _counts(response.get("usage"))
        invalid: list[list[InvalidToolCall]] = []
        for choice in response["choices"]:
            message = choice["message"]
            # Content blocks such as {"text": null} or {"text": 5} would make langchain-core raise TypeError.
            if isinstance(message.get("content"), list):
                message["content"] = message_text(message["content"])
            invalid.append(_not_object_calls(message))
        result = super()._create_chat_result(response, generation_info)
        for generation, calls in zip(result.generations, invalid):
            if calls and isinstance(generation.message, AIMessage):
                generation.message.invalid_tool_calls.extend(calls)
        if parsed is not None:
            result.generations[0].message.additional_kwargs["parsed"] = parsed
        # llama.cpp servers time prompt reading and generation apart (`timings`); keep that for the run's records.
        timings = response.get("timings") if isinstance(response, dict) else None
        if isinstance(timings, dict):
            for generation in result.generations:
                generation.message.response_metadata["timings"] = timings
        return result

    def _convert_chunk_to_generation_chunk(self, chunk: dict, default_chunk_class: type,
                                           base_generation_info: dict | None) -> ChatGenerationChunk | None:
        if isinstance(chunk, dict) and chunk.get("usage") is not None:
            chunk = {**chunk, "usage": _counts(chunk["usage"])}
        return super()._convert_chunk_to_generation_chunk(chunk, default_chunk_class, base_generation_info)

    def _get_llm_string(self, stop: list[str] | None = None, **kwargs: Any) -> str:
        """Cache key part: the spec, the server, the sampling parameters and schema; not timeouts or keys."""
        params = {k: v for k, v in self._default_params.items() if k not in ("stream", "model", "timeout")}
        # Two servers may answer differently for one model name; credentials masked, as the key is stored.
        server = E.redact_url(self.openai_api_base) or "api.openai.com"
        return json.dumps({"spec": self.spec or self.model_name, "server": server, "params": params,
                           "stop": stop, "kwargs": kwargs}, sort_keys=True, default=str)

    def _retry_after(self, error: BaseException) -> float | None:
        return retry_after_seconds(getattr(getattr(error.__cause__, "response", None), "headers", None))

    def _first(self, chunk: ChatGenerationChunk | None) -> ChatGenerationChunk:
        """A stream's first chunk; a stream that ends before any is an EmptyChoicesError, not an empty reply."""
        if chunk is None:
            where = E.redact_url(self.openai_api_base) or "api.openai.com"
            raise E.EmptyChoicesError(f"{self.spec or 'openai:' + self.model_name}: {where} streamed no reply at all")
        return chunk


def make_openai_chat(model: str, *, base_url: str | None = None, timeout: float = 120.0, max_retries: int = 3,
                     temperature: float | None = 0.0, max_tokens: int | None = None,
                     env: Mapping[str, str] | None = None) -> OpenAICompatChat:
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
    return OpenAICompatChat(model=model, spec=f"openai:{model}", base_url=base_url,
                            api_key=key or PLACEHOLDER_KEY, timeout=timeout, max_retries=max_retries,
                            temperature=temperature, max_tokens=max_tokens, stream_usage=True,
                            legacy_max_tokens=base_url is not None)
