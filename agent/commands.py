"""`python cli.py ask`: one question through the agent, step by step or as JSON."""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.utils.json import parse_partial_json

from frames_agent.agent.llm.spec import DEFAULT_MODEL


class CacheFlag(argparse.BooleanOptionalAction):
    """--cache/--no-cache as one flag pair in --help, stored as `no_cache` (what the settings read)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, bool(option_string and option_string.startswith("--no-")))


def add_agent_flags(parser: argparse.ArgumentParser, cache: bool = True) -> None:
    """Flags of every command that runs the agent (AgentSettings.from_flags); cache: the LLM call cache's default."""
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


# Each token re-reads the reply so far: past this many characters the answer is printed whole at the end.
MAX_STREAMED_CHARS = 4000


class JsonFields:
    """The string fields of a JSON reply as it is written: feed() returns each chunk's (field, new text) pairs."""

    def __init__(self) -> None:
        self.text = ""
        self.shown: dict[str, str] = {}  # each field's text printed so far

    def feed(self, text: str) -> list[tuple[str, str]]:
        """The field text this chunk adds (nothing for keys, punctuation or non-string values)."""
        self.text += text
        try:
            parsed = parse_partial_json(self.text) if len(self.text) <= MAX_STREAMED_CHARS else None
        except ValueError:
            parsed = None
        pieces = []
        for field, value in parsed.items() if isinstance(parsed, dict) else ():
            value = value.encode("utf-8", "ignore").decode() if isinstance(value, str) else ""  # no lone surrogates
            shown = self.shown.get(field, "")
            if len(value) > len(shown) and value.startswith(shown):
                pieces.append((field, value[len(shown):]))
                self.shown[field] = value
        return pieces


class AnswerPrinter(BaseCallbackHandler):
    """Prints the answer call's reply as its tokens arrive: a JSON reply as its fields' text, a plain one as is."""

    def __init__(self, write: Callable[[str], Any] | None = None) -> None:
        self.write = write or (lambda text: print(text, end="", flush=True))
        self.runs: dict[Any, JsonFields | None] = {}
        self.field: str | None = None
        self.answer = ""  # the answer field's text as printed (a plain reply: all of it)

    @property
    def printed(self) -> bool:
        """Whether any of the answer reached the terminal."""
        return self.field is not None

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: Any, metadata: Any = None,
                            **kwargs: Any) -> None:
        """Follow the calls of the answer node."""
        if (metadata or {}).get("langgraph_node") == "answer":
            self.runs[run_id] = None
            self.__class__ = StreamingAnswerPrinter

    def on_llm_end(self, response: Any, *, run_id: Any, **kwargs: Any) -> None:
        """An answer call is over."""
        self.__class__ = AnswerPrinter

    def on_llm_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> None:
        """An answer call failed."""
        self.__class__ = AnswerPrinter

    def on_llm_new_token(self, token: Any, *, run_id: Any, **kwargs: Any) -> None:
        """Print what this token adds to the answer."""
        if run_id not in self.runs or not token or not isinstance(token, str):
            return
        from frames_agent.core.terminal import plain

        fields = self.runs[run_id]
        if fields is None and not self.printed and token.lstrip().startswith("{"):
            fields = self.runs[run_id] = JsonFields()
        for field, text in fields.feed(token) if fields is not None else [("answer", token)]:
            if field != self.field:
                heading = "\n── answer\n" if self.field is None else "\n"
                self.write(heading + ("Answer: " if field == "answer" and fields is not None else ""))
                self.field = field
            if field == "answer":
                self.answer += text
            self.write(text if not text.strip() else plain(text, lines=False))


class StreamingAnswerPrinter(AnswerPrinter):
    """An AnswerPrinter while an answer call is open: LangChain streams only for a handler class with these methods."""

    def tap_output_iter(self, run_id: Any, output: Any) -> Any:
        """Chunks pass through unchanged (sync and async alike)."""
        return output

    tap_output_aiter = tap_output_iter


def run_ask(args: argparse.Namespace) -> int:
    """Answer one question; stream the steps, or print the --json object."""
    from frames_agent.agent.limits import check_text
    from frames_agent.agent.settings import AgentSettings
    from frames_agent.agent.state import progress_line
    from frames_agent.core.terminal import plain

    args.question = check_text(args.question)  # the limits of every entry point, before anything loads
    agent = AgentSettings.from_flags(vars(args)).build_agent()
    if args.json:
        print(json.dumps(agent.invoke(args.question).summary(), ensure_ascii=False))
        return 0
    # Self-ask's sub-question calls run in the answer node too: their replies are no answer to show.
    printer = AnswerPrinter()
    config: Any = {} if agent.config.sub_questions else {"callbacks": [printer]}
    result = None
    for event in agent.stream(args.question, config=config):
        print(progress_line(event), end="", flush=True)
        if event.kind == "answer":
            result = event.result
    assert result is not None, "a typed stream ends with its answer event"
    if printer.printed:
        print(flush=True)
    findings = result.final.findings if result.final else []
    if findings:
        print("\n── notes (self-ask)", flush=True)
        for finding in findings:
            print(plain(f"   {finding.question} → {finding.answer}", lines=False), flush=True)
    if not printer.printed or printer.answer.strip() != result.answer.strip():
        print(f"\nAnswer: {plain(result.answer)}")
    sources = result.answer_context.shown_titles if result.answer_context else []
    if sources:
        print(plain(f"Sources: {'; '.join(sources[:10])}", lines=False), flush=True)
    print(f"({result.llm_calls} LLM calls, {result.tokens.prompt}+{result.tokens.completion} tokens, "
          f"{len(result.documents)} documents, {result.seconds:.1f}s; the answer prompt showed "
          f"{result.answer_context.documents_shown} articles and cut {result.answer_context.documents_cut} "
          f"(~{result.answer_context.tokens_cut} tokens) to fit its budget)", file=sys.stderr)
    return 0
