"""`python cli.py ask`: one question through the agent, step by step or as JSON."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from frames_agent.agent.llm.spec import DEFAULT_MODEL


class CacheFlag(argparse.BooleanOptionalAction):
    """--cache/--no-cache, one flag pair in --help, stored as `no_cache` (what AgentSettings.from_flags and the run
    settings read)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, bool(option_string and option_string.startswith("--no-")))


def add_agent_flags(parser: argparse.ArgumentParser, cache: bool = True) -> None:
    """Flags shared by every command that runs the agent (ask, serve, mcp, frames, compare, sweep, tune); a command
    turns them into AgentSettings with `AgentSettings.from_flags(vars(args))`. cache: whether the LLM call cache is
    on unless --no-cache (serve: off unless --cache)."""
    parser.add_argument("--k", type=int, default=5, help="search queries per step (default 5)")
    parser.add_argument("--n", type=int, default=5, help="retrieval steps (default 5)")
    parser.add_argument("--n-docs", type=int, default=10, help="hits per query (default 10)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="model spec, e.g. gemini:gemini-2.5-flash, openai:gpt-4o-mini")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible server for openai: models")
    parser.add_argument("--prompt", default="planning", help="planning prompt: vanilla, planning, or a file path")
    parser.add_argument("--index", default="default", help="index name or directory (default: the embedded index)")
    parser.add_argument("--tools", default="wiki", help="wiki, crag, crag:<domain>, comma-separated (default wiki)")
    # default=None: argparse would otherwise print "(default: ...)" of the stored no_cache, the opposite word.
    parser.add_argument("--cache", action=CacheFlag, dest="no_cache", default=None,
                        help=f"read and write the on-disk LLM call cache (default: {'on' if cache else 'off'}"
                        f"{'' if cache else ': answered afresh; on, a repeated model call is answered from the cache'})")
    parser.set_defaults(no_cache=not cache)
    parser.add_argument("--answer-prompt", default=None,
                        help="answer prompt: answer (brief reasoning, then a final line; default), answer_direct "
                        "(the paper's direct prompt), or a file path")
    parser.add_argument("--answer-budget", type=int, default=None, help="context tokens the answer may read "
                        "(default sized for the model)")
    parser.add_argument("--calculator", action="store_true", default=None,
                        help="redo the arithmetic an answer shows as '<expression> = <result>' with a safe calculator")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="settings",
                        help="any agent config field, e.g. --set plan_budget=500 --set propose_queries=false "
                             "(repeatable; recorded in the run config)")
    parser.add_argument("--answer-passages", type=int, default=None, help="passages shown per article when answering "
                        "(its lead and the most relevant ones; 0 = the article's beginning)")
    add_deadline_flags(parser)


def add_deadline_flags(parser: argparse.ArgumentParser) -> None:
    """--timeout and --question-timeout (AgentConfig.timeout / question_timeout; defaults sized for the model)."""
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="per LLM request (default 600 for local models, 120 for hosted; retries add attempts)")
    parser.add_argument("--question-timeout", type=float, default=None, metavar="SECONDS",
                        help="per question; past it the question fails with the reason "
                             "(default 1800 local, 900 hosted)")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `ask` subcommand."""
    parser = sub.add_parser("ask", help="answer one question with the multi-step agent")
    parser.add_argument("question")
    add_agent_flags(parser, cache=False)  # one question answered afresh unless --cache
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the step-by-step view")
    parser.set_defaults(handler=run_ask)


def _print_event(event: Any) -> None:
    from frames_agent.core.terminal import plain

    if event.kind == "step_started":
        print(f"\n── step {event.step}", flush=True)
    elif event.kind == "queries":
        note = "  (fallback)" if event.fallback else ""
        print(plain(f"   queries: {' | '.join(event.queries)}{note}", lines=False), flush=True)
        for call in event.tool_calls:
            print(plain(f"   tool: {call.name}({json.dumps(call.args, ensure_ascii=False)})", lines=False), flush=True)
    elif event.kind == "documents_added":
        titles = ", ".join(dict.fromkeys(d.title for d in event.documents))
        print(plain(f"   +{len(event.documents)} new: {titles[:300]}", lines=False), flush=True)


def run_ask(args: argparse.Namespace) -> int:
    """Answer one question; stream the steps, or print the --json object."""
    from frames_agent.agent.limits import check_text
    from frames_agent.agent.settings import AgentSettings
    from frames_agent.core.terminal import plain

    args.question = check_text(args.question)  # the limits of every entry point, before anything loads
    agent = AgentSettings.from_flags(vars(args)).build_agent()
    if args.json:
        print(json.dumps(agent.invoke(args.question).summary(), ensure_ascii=False))
        return 0
    result = None
    for event in agent.stream(args.question):
        _print_event(event)
        if event.kind == "answer":
            result = event.result
    assert result is not None, "a typed stream ends with its answer event"
    findings = result.final.findings if result.final else []
    if findings:
        print("\n── notes (self-ask)", flush=True)
        for finding in findings:
            print(plain(f"   {finding.question} → {finding.answer}", lines=False), flush=True)
    print(f"\nAnswer: {plain(result.answer)}")
    print(f"({result.llm_calls} LLM calls, {result.tokens.prompt}+{result.tokens.completion} tokens, "
          f"{len(result.documents)} documents, {result.seconds:.1f}s; the answer prompt showed "
          f"{result.answer_context.documents_shown} articles and cut {result.answer_context.documents_cut} "
          f"(~{result.answer_context.tokens_cut} tokens) to fit its budget)", file=sys.stderr)
    return 0
