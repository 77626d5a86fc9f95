"""`python cli.py llm PROMPT`: one call to any model spec, plain or shaped by a JSON schema file (the common subset
of JSON schema, as a pydantic model)."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from types import GenericAlias
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, create_model

from frames_agent.agent.llm.errors import LLMError
from frames_agent.agent.llm.spec import DEFAULT_MODEL


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `llm` subcommand."""
    parser = sub.add_parser("llm", help="send one prompt to a model (default: the embedded local model)")
    parser.add_argument("prompt", help="the prompt text ('-' reads it from stdin)")
    parser.add_argument("--model", default=DEFAULT_MODEL,
                        help=f"model spec: {DEFAULT_MODEL}, local:smollm2-135m, gemini:<model>, openai:<model>, "
                             "or any LangChain provider (anthropic:<model>, ollama:<model>, ...)")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible server for openai: models (or OPENAI_BASE_URL)")
    parser.add_argument("--json-schema", type=Path, default=None, help="JSON schema file; prints the validated JSON reply")
    parser.add_argument("--system", default=None, help="a system message to send first")
    parser.add_argument("--max-tokens", type=int, default=None, help="cap on reply tokens")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per call (default 120 remote, 600 local)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the LLM call cache")
    parser.set_defaults(handler=run_llm)


def _no_fallback(raw: str) -> Any:
    """No stand-in for a reply that is not the schema's JSON: the value is None."""
    return None


def run_llm(args: argparse.Namespace) -> int:
    """Handler of `llm`."""
    from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

    from frames_agent.agent.llm import UsageTracker, resolve_model, structured

    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    schema = load_schema_model(args.json_schema) if args.json_schema else None
    llm = resolve_model(args.model, base_url=args.base_url, timeout=args.timeout, max_tokens=args.max_tokens,
                        cache=not args.no_cache)
    messages: list[BaseMessage] = ([SystemMessage(content=args.system)] if args.system else []) + [HumanMessage(content=prompt)]
    tracker, start = UsageTracker(), time.perf_counter()
    config: Any = {"callbacks": [tracker]}
    code = 0
    if schema is None:
        print(str(llm.invoke(messages, config=config).content))
    elif (result := structured(llm, messages, schema, _no_fallback, config=config)).fallback:
        print(result.raw)
        print(f"error: the reply does not match the schema ({result.error})", file=sys.stderr)
        code = 1
    else:
        print(json.dumps(result.value.model_dump(mode="json"), indent=2, ensure_ascii=False))
        if result.repaired:
            print(f"note: repaired the reply: {'; '.join(result.notes)}", file=sys.stderr)
    cached = " (cached)" if tracker.usage.cached_calls else ""
    print(f"[{args.model}] {tracker.usage.prompt_tokens} prompt + {tracker.usage.completion_tokens} completion tokens, "
          f"{time.perf_counter() - start:.1f} s{cached}", file=sys.stderr)
    return code


SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool}


class SchemaFileError(LLMError):
    """The JSON schema file is unreadable or uses constructs we do not translate."""


def load_schema_model(path: Path) -> type[BaseModel]:
    """The pydantic model a JSON schema file describes (top level must be an object)."""
    try:
        schema = json.loads(Path(path).read_text())
    except OSError as exc:
        raise SchemaFileError(f"cannot read schema {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise SchemaFileError(f"schema {path} is not valid JSON: {str(exc).splitlines()[0]}") from None
    if not isinstance(schema, dict) or "properties" not in schema:
        raise SchemaFileError(f"schema {path}: the top level must be an object with properties")
    return schema_model(schema, schema.get("title") or "Reply")


def schema_model(schema: dict, name: str, defs: dict | None = None) -> type[BaseModel]:
    """A pydantic model for an object schema."""
    defs = schema.get("$defs", schema.get("definitions", {})) if defs is None else defs
    required = set(schema.get("required", []))
    fields: dict[str, Any] = {}
    for key, sub in schema.get("properties", {}).items():
        kind = _type(sub, f"{name}_{key}", defs)
        info = {"description": sub.get("description")} if sub.get("description") else {}
        bounds = {k2: sub[k1] for k1, k2 in (("minItems", "min_length"), ("maxItems", "max_length"),
                                              ("minLength", "min_length"), ("maxLength", "max_length")) if k1 in sub}
        if key in required:
            fields[key] = (kind, Field(..., **info, **bounds))
        else:
            fields[key] = (Optional[kind], Field(None, **info, **bounds))
    extra: Literal["allow", "forbid"] = "allow" if schema.get("additionalProperties", True) is not False else "forbid"
    return create_model(name, __config__=ConfigDict(extra=extra), **fields)


def _type(sub: dict, name: str, defs: dict) -> Any:
    if "$ref" in sub:
        return _type(defs[sub["$ref"].split("/")[-1]], name, defs)
    if "enum" in sub:
        return Literal[tuple(sub["enum"])]
    options = sub.get("anyOf") or sub.get("oneOf")
    if options:
        real = [o for o in options if o.get("type") != "null"]
        if len(real) != 1:
            raise SchemaFileError(f"schema: {name}: unions other than 'X or null' are not supported")
        return Optional[_type(real[0], name, defs)]
    kind = sub.get("type")
    if isinstance(kind, list):
        real = [k for k in kind if k != "null"]
        inner = _type({**sub, "type": real[0] if real else "string"}, name, defs)
        return Optional[inner] if "null" in kind else inner
    if kind in SCALARS:
        return SCALARS[kind]
    if kind == "array":
        return GenericAlias(list, _type(sub.get("items", {}), name, defs)) if sub.get("items") else list[Any]
    if kind == "object" or "properties" in sub:
        return schema_model(sub, name, defs) if "properties" in sub else dict[str, Any]
    if kind is None:
        return Any
    raise SchemaFileError(f"schema: {name}: type {kind!r} is not supported")
