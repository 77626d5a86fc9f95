"""`python cli.py llm PROMPT`: one call to any model spec, plain or JSON-schema shaped."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

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
    from frames_agent.agent.llm.schema_file import load_schema_model

    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    schema = load_schema_model(args.json_schema) if args.json_schema else None
    llm = resolve_model(args.model, base_url=args.base_url, timeout=args.timeout, max_tokens=args.max_tokens,
                        cache=not args.no_cache)
    messages: list[BaseMessage] = ([SystemMessage(content=args.system)] if args.system else []) + [HumanMessage(content=prompt)]
    tracker, start = UsageTracker(), time.perf_counter()
    config: Any = {"callbacks": [tracker]}
    if schema is None:
        print(str(llm.invoke(messages, config=config).content))
        code = 0
    else:
        result = structured(llm, messages, schema, _no_fallback, config=config)
        code = _print_structured(result)
    cached = " (cached)" if tracker.usage.cached_calls else ""
    print(f"[{args.model}] {tracker.usage.prompt_tokens} prompt + {tracker.usage.completion_tokens} completion tokens, "
          f"{time.perf_counter() - start:.1f} s{cached}", file=sys.stderr)
    return code


def _print_structured(result: Any) -> int:
    if result.fallback:
        print(result.raw)
        print(f"error: the reply does not match the schema ({result.error})", file=sys.stderr)
        return 1
    print(json.dumps(result.value.model_dump(mode="json"), indent=2, ensure_ascii=False))
    if result.repaired:
        print(f"note: repaired the reply: {'; '.join(result.notes)}", file=sys.stderr)
    return 0
