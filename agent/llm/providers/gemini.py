"""gemini:<model> — a LangChain chat model over google-generativeai (the SDK, not langchain-google-genai)."""
from __future__ import annotations

import json
import os
import warnings
from typing import Any, Iterator

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    SystemMessage,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import PrivateAttr, SecretStr

from agent.llm import errors as E
from agent.llm.retry import RetryPolicy, call_with_retries

with warnings.catch_warnings():  # the SDK warns about its own deprecation and old Pythons on import
    warnings.simplefilter("ignore")
    import google.api_core.exceptions as gexc
    import google.generativeai as genai
    from google.ai import generativelanguage as glm
    from google.generativeai import protos
    from google.generativeai.types import generation_types

KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
BLOCKING_FINISH = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION", "IMAGE_SAFETY"}


def gemini_key(env: dict[str, str] | None = None) -> str:
    """The API key from GEMINI_API_KEY or GOOGLE_API_KEY."""
    env = os.environ if env is None else env
    for var in KEY_VARIABLES:
        if env.get(var):
            return env[var]
    raise E.MissingKeyError("gemini: set GEMINI_API_KEY (or GOOGLE_API_KEY) to your Gemini API key")


def json_schema_to_gemini(schema: dict, defs: dict | None = None) -> dict:
    """A JSON schema (pydantic's) as the OpenAPI subset Gemini's response_schema accepts."""
    defs = schema.get("$defs", {}) if defs is None else defs
    if "$ref" in schema:
        return json_schema_to_gemini(defs[schema["$ref"].split("/")[-1]], defs)
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        real = [o for o in options if o.get("type") != "null"]
        out = json_schema_to_gemini(real[0], defs) if real else {"type_": "STRING"}
        return {**out, "nullable": True} if len(real) < len(options) else out
    kind = schema.get("type", "string")
    nullable = isinstance(kind, list) and "null" in kind
    kind = next((k for k in kind if k != "null"), "string") if isinstance(kind, list) else kind
    out: dict[str, Any] = {"type_": kind.upper()}
    for src, dst in (("description", "description"), ("enum", "enum"), ("minItems", "min_items"),
                     ("maxItems", "max_items"), ("required", "required")):
        if src in schema:
            out[dst] = [str(v) for v in schema[src]] if src == "enum" else schema[src]
    if "items" in schema:
        out["items"] = json_schema_to_gemini(schema["items"], defs)
    if "properties" in schema:
        out["properties"] = {k: json_schema_to_gemini(v, defs) for k, v in schema["properties"].items()}
    return {**out, "nullable": True} if nullable else out


def _schema_from_response_format(fmt: Any) -> dict | None:
    """The JSON schema inside an OpenAI-style response_format, if any."""
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        return fmt.get("json_schema", {}).get("schema")
    if isinstance(fmt, type) and hasattr(fmt, "model_json_schema"):
        return fmt.model_json_schema()
    return None


def to_contents(messages: list[BaseMessage]) -> tuple[str | None, list[dict]]:
    """(system instruction, contents) in Gemini's roles."""
    system = "\n\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage)) or None
    contents = [{"role": "model" if m.type == "ai" else "user", "parts": [str(m.content)]}
                for m in messages if not isinstance(m, SystemMessage)]
    return system, contents


def classify_gemini_error(exc: Exception, spec: str) -> Exception:
    """Our error type for an SDK exception (unknown ones pass through)."""
    if isinstance(exc, E.LLMError):
        return exc
    detail = E.redact(str(getattr(exc, "message", exc)))
    if isinstance(exc, (gexc.TooManyRequests, gexc.ResourceExhausted)):
        return E.QuotaError(f"{spec}: quota or rate limit exceeded after retries: {detail}")
    if isinstance(exc, (gexc.InternalServerError, gexc.ServiceUnavailable, gexc.BadGateway)):
        return E.ServerError(f"{spec}: server error after retries: {detail}")
    if isinstance(exc, (gexc.DeadlineExceeded, gexc.GatewayTimeout, TimeoutError)) or "Timeout" in type(exc).__name__:
        return E.LLMTimeoutError(f"{spec}: no reply within the timeout, after retries")
    if isinstance(exc, (gexc.Unauthenticated, gexc.PermissionDenied)) or (
            isinstance(exc, gexc.InvalidArgument) and "api key" in detail.lower()):
        return E.AuthError(f"{spec}: the API key was rejected (check GEMINI_API_KEY / GOOGLE_API_KEY)")
    if isinstance(exc, gexc.NotFound):
        return E.ModelNotFoundError(f"{spec}: model not found (check the name, e.g. gemini:gemini-1.5-flash)")
    if isinstance(exc, generation_types.BlockedPromptException):
        return E.SafetyBlockError(f"{spec}: the prompt was blocked by the safety filter")
    if isinstance(exc, gexc.GoogleAPICallError):
        return E.LLMError(f"{spec}: request failed: {detail}")
    if "ConnectionError" in type(exc).__name__:
        return E.UnreachableError(f"{spec}: cannot reach the Gemini API")
    return exc


def _usage(resp: Any) -> UsageMetadata | None:
    meta = getattr(resp, "usage_metadata", None)
    if not meta or not getattr(meta, "total_token_count", 0):
        return None
    prompt, completion = int(meta.prompt_token_count), int(meta.candidates_token_count)
    return UsageMetadata(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion)


def _reply_text(resp: Any, spec: str, *, allow_empty: bool = False) -> tuple[str, str]:
    """(text, finish reason), raising our errors for blocked or empty replies."""
    block = getattr(getattr(resp, "prompt_feedback", None), "block_reason", 0)
    if block:
        raise E.SafetyBlockError(f"{spec}: the prompt was blocked ({getattr(block, 'name', block)})")
    if not resp.candidates:
        if allow_empty:
            return "", ""
        raise E.EmptyReplyError(f"{spec}: the reply had no candidate")
    cand = resp.candidates[0]
    finish = getattr(cand.finish_reason, "name", str(cand.finish_reason))
    text = "".join(getattr(p, "text", "") for p in cand.content.parts)
    if not text and finish in BLOCKING_FINISH:
        raise E.SafetyBlockError(f"{spec}: the reply was withheld ({finish})")
    if not text and not allow_empty:
        raise E.EmptyReplyError(f"{spec}: the reply was empty (finish reason {finish})")
    return text, finish


class GeminiChat(BaseChatModel):
    """Gemini through google-generativeai: plain, streamed and JSON-schema replies, usage, one-line errors."""

    model: str
    spec: str = ""
    api_key: SecretStr
    temperature: float | None = 0.0
    max_output_tokens: int | None = None
    timeout: float = 120.0
    max_retries: int = 3
    retry_base_delay: float = 1.0
    safety_settings: Any = None
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

    def _sdk_model(self, system: str | None) -> Any:
        model = genai.GenerativeModel(self.model, system_instruction=system, safety_settings=self.safety_settings)
        if self._client is None:
            # A client of our own carries our key, instead of genai.configure()'s process-wide one.
            self._client = glm.GenerativeServiceClient(
                client_options={"api_key": self.api_key.get_secret_value()}, transport="rest")
        model._client = self._client
        return model

    def _config(self, stop: list[str] | None, kwargs: dict) -> dict:
        config: dict[str, Any] = {"temperature": self.temperature, "max_output_tokens": kwargs.get("max_tokens", self.max_output_tokens)}
        if stop:
            config["stop_sequences"] = stop
        fmt = kwargs.get("response_format")
        schema = _schema_from_response_format(fmt)
        if fmt is not None:
            config["response_mime_type"] = "application/json"
        if schema:
            config["response_schema"] = protos.Schema(json_schema_to_gemini(schema))
        return {k: v for k, v in config.items() if v is not None}

    def _call(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict, stream: bool) -> Any:
        system, contents = to_contents(messages)
        model, config = self._sdk_model(system), self._config(stop, kwargs)
        policy = RetryPolicy(max_retries=self.max_retries, base_delay=self.retry_base_delay)
        return call_with_retries(
            lambda: model.generate_content(contents, generation_config=config, stream=stream,
                                           request_options={"timeout": self.timeout}),
            policy, lambda exc: classify_gemini_error(exc, self.spec))

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        resp = self._call(messages, stop, kwargs, stream=False)
        text, finish = _reply_text(resp, self.spec)
        message = AIMessage(content=text, usage_metadata=_usage(resp),
                            response_metadata={"finish_reason": finish, "model_name": self.model})
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        usage, finish = None, ""
        try:
            for chunk in self._call(messages, stop, kwargs, stream=True):
                text, finish = _reply_text(chunk, self.spec, allow_empty=True)
                usage = _usage(chunk) or usage  # each chunk reports the running total
                if text:
                    if run_manager:
                        run_manager.on_llm_new_token(text)
                    yield ChatGenerationChunk(message=AIMessageChunk(content=text))
        except Exception as exc:  # noqa: BLE001 - mapped to ours, or re-raised unchanged
            mapped = classify_gemini_error(exc, self.spec)
            if mapped is exc:
                raise
            raise mapped from None
        yield ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=usage,
                                                         response_metadata={"finish_reason": finish}))


def make_gemini_chat(model: str, *, timeout: float = 120.0, max_retries: int = 3, temperature: float | None = 0.0,
                     max_tokens: int | None = None, env: dict[str, str] | None = None) -> GeminiChat:
    """gemini:<model> with the key from the environment."""
    if not model:
        raise E.ModelSpecError("gemini: name a model, e.g. gemini:gemini-1.5-flash")
    return GeminiChat(model=model, spec=f"gemini:{model}", api_key=SecretStr(gemini_key(env)), timeout=timeout,
                      max_retries=max_retries, temperature=temperature, max_output_tokens=max_tokens)
