"""gemini:<model> — a LangChain chat model over google-genai, Google's maintained SDK (sync and async)."""
from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import httpx
from google import genai
from google.genai import errors as gerr
from google.genai import types
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, SystemMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import PrivateAttr, SecretStr

from frames_agent.agent.llm import errors as E
from frames_agent.agent.llm.retry import RetriedChat, RetryPolicy, request_timeout, timed_out
from frames_agent.core.bounded import JSONOutOfBounds
from frames_agent.core.http import bounded_transport, in_chain

KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
# The SDK itself reads this one too; tests and proxies point it at another host.
BASE_URL_VARIABLE = "GOOGLE_GEMINI_BASE_URL"
BLOCKING_FINISH = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION", "IMAGE_SAFETY"}
EXAMPLE = "gemini:gemini-2.5-flash"


def json_schema_to_gemini(schema: dict, defs: dict | None = None) -> dict:
    """A JSON schema (pydantic's) as the OpenAPI subset Gemini's response_schema accepts (refs inlined)."""
    defs = schema.get("$defs", {}) if defs is None else defs
    if "$ref" in schema:
        return json_schema_to_gemini(defs[schema["$ref"].split("/")[-1]], defs)
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        real = [o for o in options if o.get("type") != "null"]
        out = json_schema_to_gemini(real[0], defs) if real else {"type": "STRING"}
        return {**out, "nullable": True} if len(real) < len(options) else out
    kind = schema.get("type", "string")
    nullable = isinstance(kind, list) and "null" in kind
    kind = next((k for k in kind if k != "null"), "string") if isinstance(kind, list) else kind
    out = {"type": kind.upper()}
    for src, dst in (("description", "description"), ("enum", "enum"), ("minItems", "min_items"),
                     ("maxItems", "max_items"), ("required", "required")):
        if src in schema:
            out[dst] = [str(v) for v in schema[src]] if src == "enum" else schema[src]
    if "items" in schema:
        out["items"] = json_schema_to_gemini(schema["items"], defs)
    if "properties" in schema:
        out["properties"] = {k: json_schema_to_gemini(v, defs) for k, v in schema["properties"].items()}
        # Gemini writes properties in alphabetical order unless told: a reasoning must come before its answer.
        out["property_ordering"] = list(schema["properties"])
    return {**out, "nullable": True} if nullable else out


def _schema_from_response_format(fmt: Any) -> dict | None:
    """The JSON schema inside an OpenAI-style response_format, if any."""
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        return fmt.get("json_schema", {}).get("schema")
    if isinstance(fmt, type) and hasattr(fmt, "model_json_schema"):
        return fmt.model_json_schema()
    return None


def classify_gemini_error(exc: Exception, spec: str) -> Exception:
    """Our error type for an SDK or transport exception (unknown ones pass through)."""
    if isinstance(exc, E.LLMError):
        return exc
    if bounds := in_chain(exc, JSONOutOfBounds):  # refused by our transport before the SDK parsed it
        return E.MalformedReplyError(f"{spec}: the Gemini API answered with {bounds} (not a reply)")
    if isinstance(exc, gerr.APIError):
        detail, code = E.redact(str(exc.message or exc.status or exc)), exc.code
        if code == 429 or exc.status == "RESOURCE_EXHAUSTED":
            return E.QuotaError(f"{spec}: quota or rate limit exceeded after retries: {detail}")
        if code in (401, 403) or (code == 400 and "api key" in detail.lower()):
            return E.AuthError(f"{spec}: the API key was rejected (check GEMINI_API_KEY / GOOGLE_API_KEY)")
        if code == 404:
            return E.ModelNotFoundError(f"{spec}: model not found (check the name, e.g. {EXAMPLE})")
        if code in (408, 504):
            return E.LLMTimeoutError(f"{spec}: no reply within the timeout, after retries")
        if code >= 500:
            return E.ServerError(f"{spec}: server error after retries: {detail}")
        return E.LLMError(f"{spec}: request failed ({code}): {detail}")
    # The SDK sends through httpx or its fork httpx2: match their shared exception names, not one package's classes.
    bases = {cls.__name__ for cls in type(exc).__mro__}
    if isinstance(exc, TimeoutError) or "TimeoutException" in bases:
        return timed_out(f"{spec}: no reply within the timeout, after retries")
    if "TransportError" in bases:
        return E.UnreachableError(f"{spec}: cannot reach the Gemini API ({type(exc).__name__})")
    return exc


def _usage(resp: types.GenerateContentResponse) -> UsageMetadata | None:
    meta = resp.usage_metadata
    if not meta or not meta.total_token_count:
        return None
    prompt, completion = int(meta.prompt_token_count or 0), int(meta.candidates_token_count or 0)
    return UsageMetadata(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion)


def _name(value: Any) -> str:
    return str(getattr(value, "value", value) or "")


def _reply_text(resp: types.GenerateContentResponse, spec: str, *, allow_empty: bool = False) -> tuple[str, str]:
    """(text, finish reason), raising our errors for blocked or empty replies."""
    block = resp.prompt_feedback.block_reason if resp.prompt_feedback else None
    if block:
        raise E.SafetyBlockError(f"{spec}: the prompt was blocked ({_name(block)})")
    if not resp.candidates:
        if allow_empty:
            return "", ""
        raise E.EmptyReplyError(f"{spec}: the reply had no candidate")
    cand = resp.candidates[0]
    finish = _name(cand.finish_reason)
    parts = cand.content.parts if cand.content and cand.content.parts else []
    text = "".join(p.text or "" for p in parts if not p.thought)
    if not text and finish in BLOCKING_FINISH:
        raise E.SafetyBlockError(f"{spec}: the reply was withheld ({finish})")
    if not text and not allow_empty:
        raise E.EmptyReplyError(f"{spec}: the reply was empty (finish reason {finish})")
    return text, finish


class GeminiModel(BaseChatModel):
    """Gemini through google-genai: plain, streamed and JSON-schema replies, sync and async, usage, one-line errors."""

    model: str
    spec: str = ""
    api_key: SecretStr
    base_url: str | None = None
    temperature: float | None = 0.0
    max_output_tokens: int | None = None
    timeout: float = 120.0
    max_retries: int = 3
    retry_base_delay: float = 1.0
    supports_json_schema: bool = True
    _client: Any = PrivateAttr(default=None)

    @property
    def _llm_type(self) -> str:
        return "gemini"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": self.model, "temperature": self.temperature, "max_output_tokens": self.max_output_tokens}

    def _get_llm_string(self, stop: list[str] | None = None, **kwargs: Any) -> str:
        return json.dumps({"spec": self.spec, "params": self._identifying_params, "stop": stop, "kwargs": kwargs},
                          sort_keys=True, default=str)

    @property
    def client(self) -> genai.Client:
        """One SDK client per model, with our key, base URL and timeout; retries are ours, not the SDK's."""
        if self._client is None:
            # One transport for both clients: a request's timeout is its total deadline, each reply is bounded.
            transport = bounded_transport(httpx)
            options = types.HttpOptions(timeout=int(self.timeout * 1000), base_url=self.base_url,
                                        client_args={"transport": transport}, async_client_args={"transport": transport})
            self._client = genai.Client(api_key=self.api_key.get_secret_value(), http_options=options)
        return self._client

    def _config(self, system: str | None, stop: list[str] | None, kwargs: dict) -> types.GenerateContentConfig:
        config: dict[str, Any] = {"system_instruction": system, "temperature": self.temperature,
                                  "max_output_tokens": kwargs.get("max_tokens", self.max_output_tokens),
                                  "stop_sequences": stop or None}
        # Each request ends by the question's deadline: an abandoned question must not keep a request alive.
        timeout = request_timeout(self.timeout, self.spec)
        if timeout is not None and timeout < self.timeout:
            config["http_options"] = types.HttpOptions(timeout=max(1, int(timeout * 1000)))
        fmt = kwargs.get("response_format")
        schema = _schema_from_response_format(fmt)
        if fmt is not None:
            config["response_mime_type"] = "application/json"
        if schema:
            config["response_schema"] = types.Schema.model_validate(json_schema_to_gemini(schema))
        return types.GenerateContentConfig(**{k: v for k, v in config.items() if v is not None})

    def _request(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict) -> dict[str, Any]:
        system = "\n\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage)) or None
        contents = [types.Content(role="model" if m.type == "ai" else "user", parts=[types.Part(text=str(m.content))])
                    for m in messages if not isinstance(m, SystemMessage)]
        return {"model": self.model, "contents": contents, "config": self._config(system, stop, kwargs)}

    def _result(self, resp: types.GenerateContentResponse) -> ChatResult:
        text, finish = _reply_text(resp, self.spec)
        message = AIMessage(content=text, usage_metadata=_usage(resp),
                            response_metadata={"finish_reason": finish, "model_name": self.model})
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        # The request is built per attempt: its timeout shrinks with what is left of the question's deadline.
        return self._result(self.client.models.generate_content(**self._request(messages, stop, kwargs)))

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                         **kwargs: Any) -> ChatResult:
        return self._result(await self.client.aio.models.generate_content(**self._request(messages, stop, kwargs)))

    def _chunk(self, resp: types.GenerateContentResponse, state: dict, run_manager: Any) -> ChatGenerationChunk | None:
        text, finish = _reply_text(resp, self.spec, allow_empty=True)
        state["usage"] = _usage(resp) or state.get("usage")  # each chunk reports the running total
        state["finish"] = finish or state.get("finish", "")
        if not text:
            return None
        if run_manager:
            run_manager.on_llm_new_token(text)
        return ChatGenerationChunk(message=AIMessageChunk(content=text))

    @staticmethod
    def _last(state: dict) -> ChatGenerationChunk:
        return ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=state.get("usage"),
                                                          response_metadata={"finish_reason": state.get("finish", "")}))

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        state: dict = {}
        for resp in self.client.models.generate_content_stream(**self._request(messages, stop, kwargs)):
            if chunk := self._chunk(resp, state, run_manager):
                yield chunk
        yield self._last(state)

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        state: dict = {}
        async for resp in await self.client.aio.models.generate_content_stream(**self._request(messages, stop, kwargs)):
            if chunk := self._chunk(resp, state, None):
                if run_manager:
                    await run_manager.on_llm_new_token(chunk.text)
                yield chunk
        yield self._last(state)


class GeminiChat(RetriedChat, GeminiModel):
    """GeminiModel with our retries: bounded, deadline-aware, the same for plain and streamed calls."""

    def _policy(self) -> RetryPolicy:
        return RetryPolicy(max_retries=self.max_retries, base_delay=self.retry_base_delay)

    def _classify(self, exc: Exception) -> Exception:
        return classify_gemini_error(exc, self.spec)


def make_gemini_chat(model: str, *, timeout: float = 120.0, max_retries: int = 3, temperature: float | None = 0.0,
                     max_tokens: int | None = None, base_url: str | None = None,
                     env: Mapping[str, str] | None = None) -> GeminiChat:
    """gemini:<model> with the key (and optional GOOGLE_GEMINI_BASE_URL) from the environment."""
    if not model:
        raise E.ModelSpecError(f"gemini: name a model, e.g. {EXAMPLE}")
    env = os.environ if env is None else env
    key = next((env[var] for var in KEY_VARIABLES if env.get(var)), None)
    if key is None:
        raise E.MissingKeyError("gemini: set GEMINI_API_KEY (or GOOGLE_API_KEY) to your Gemini API key")
    return GeminiChat(model=model, spec=f"gemini:{model}", api_key=SecretStr(key), timeout=timeout,
                      base_url=base_url or env.get(BASE_URL_VARIABLE) or None, max_retries=max_retries,
                      temperature=temperature, max_output_tokens=max_tokens)
