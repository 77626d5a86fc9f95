"""frames-agent command line: `python cli.py COMMAND ...` (see --help)."""
from __future__ import annotations

import argparse
import importlib
import os
import sys

# Each module exposes register(subparsers); handlers import their heavy dependencies lazily.
COMMAND_MODULES = (
    "index.commands",  # index build, search
    "agent.llm.commands",  # llm
    "agent.commands",  # ask
    "eval.frames.commands",  # frames, compare, report
    "eval.crag.commands",  # crag, crag-server
    "agent.serve.commands",  # serve
    "agent.mcp.commands",  # mcp
    "eval.commands",  # rejudge
)


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error instead of a usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"error: {message} (see: {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every package's subcommands."""
    parser = _Parser(prog="cli.py", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; return its exit code."""
    from retrieval.errors import FramesAgentError

    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except FramesAgentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; finished work is saved", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug, not bad input: still one line unless asked for more
        if os.environ.get("FRAMES_AGENT_DEBUG"):
            raise
        print(f"error: unexpected {type(exc).__name__}: {exc} (FRAMES_AGENT_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
