"""`python cli.py rejudge RUN_DIR --judge SPEC`: rate the unrated answers of a finished FRAMES or CRAG run."""
from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    """Add the rejudge subcommand."""
    parser = sub.add_parser(
        "rejudge", help="rate the unrated answers of a finished run (FRAMES or CRAG) with a judge model",
        description="A run with --judge none leaves every answer that is not an exact match unrated. This rates "
                    "them with --judge without re-running the system (resumable) and refreshes the summary.")
    parser.add_argument("run_dir", metavar="RUN_DIR")
    parser.add_argument("--judge", required=True, help="judge model spec, e.g. openai:gpt-4o-mini")
    parser.add_argument("--concurrency", type=int, default=4,
                        help="judge calls in flight (default 4; a local judge serves one at a time anyway)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the LLM call cache")
    parser.set_defaults(handler=run_rejudge)


def make_judge(kind: str, spec: str, cache: bool = True):
    """The judge of a run's kind over the model `spec`."""
    if kind == "crag":
        from frames_agent.agent.llm import resolve_model
        from frames_agent.eval.crag.score import CragJudge

        return CragJudge(resolve_model(spec, cache=cache), spec)
    from frames_agent.eval.frames.autorater import autorater

    return autorater(spec, cache=cache)


def run_rejudge(args: argparse.Namespace) -> int:
    """Rate the unrated answers and print the refreshed figures."""
    from frames_agent.eval.errors import EvalError
    from frames_agent.eval.rejudge import rejudge

    if args.concurrency < 1:
        raise EvalError(f"--concurrency must be at least 1, got {args.concurrency}")
    path = Path(args.run_dir)
    done = rejudge(path, args.judge, lambda kind, spec: make_judge(kind, spec, cache=not args.no_cache),
                   concurrency=args.concurrency)
    if done.kind == "crag":
        from frames_agent.eval.crag.score import Figures, format_table

        assert isinstance(done.summary, Figures), "a CRAG run's summary"
        print(format_table(done.summary))
    else:
        from frames_agent.eval.frames.commands import one_line

        print(f"{path}: " + one_line(path, done.summary))
    return 0
