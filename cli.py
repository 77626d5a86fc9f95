"""frames-agent command line: `python cli.py COMMAND ...` (see --help)."""
from __future__ import annotations

import argparse
import errno
import importlib
import logging
import os
import sys

# Each module's register(subparsers) adds these commands; only the running command's module is imported.
COMMAND_MODULES = {
    "frames_agent.index.commands": ("index", "search"),
    "frames_agent.agent.llm.commands": ("llm",),
    "frames_agent.agent.commands": ("ask",),
    "frames_agent.eval.frames.commands": ("frames", "compare", "report", "judge-check"),
    "frames_agent.eval.crag.commands": ("crag", "crag-server"),
    "frames_agent.agent.serve.commands": ("serve",),
    "frames_agent.agent.mcp.commands": ("mcp",),
    "frames_agent.eval.commands": ("rejudge",),
    "frames_agent.eval.tune.commands": ("tune",),
    "frames_agent.eval.sweep.commands": ("sweep",),
}


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error instead of a usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"error: {message} (see: {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every package's subcommands (or only the package that serves `command`)."""
    # `python cli.py` in a checkout, `frames-agent` once installed: usage lines name what the user typed.
    prog = "cli.py" if os.path.basename(sys.argv[0]) == "cli.py" else "frames-agent"
    parser = _Parser(prog=prog, description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    modules = [m for m, names in COMMAND_MODULES.items() if command in names] or list(COMMAND_MODULES)
    for name in modules:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; return its exit code."""
    code = _main(argv)
    if argv is None:  # run as the program: do not wait for a question given up at its deadline
        _leave_abandoned_work(code)
    return code


def _leave_abandoned_work(code: int) -> None:
    """Exit now (output flushed) if a question abandoned at its deadline still runs: its thread cannot be joined."""
    deadline = sys.modules.get("frames_agent.agent.deadline")
    if deadline is None or not deadline.abandoned():
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    logging.shutdown()
    os._exit(code)


def _main(argv: list[str] | None) -> int:
    _tolerant_streams()
    try:  # the parser too: Ctrl-C while the command modules import must not print a traceback
        from frames_agent.core.errors import FramesAgentError, Terminated

        argv = _checked_args(sys.argv[1:] if argv is None else argv)
        args = build_parser(argv[0] if argv else None).parse_args(argv)
        return int(args.handler(args) or 0)
    except FramesAgentError as exc:
        from frames_agent.core.terminal import plain

        print(f"error: {plain(exc, lines=False)}", file=sys.stderr)  # a model's or a file's words, shown inert
        return 2
    except KeyboardInterrupt:
        print("interrupted; finished work is saved", file=sys.stderr)
        return 130
    except Terminated:  # SIGTERM where a command unwinds for it (a Ray run): 128 + 15, as a plain kill would
        print("terminated; finished work is saved (run the same command again to resume)", file=sys.stderr)
        return 143
    except BrokenPipeError:  # `... | head` stopped reading: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (PermissionError, NotADirectoryError, IsADirectoryError, FileExistsError) as exc:
        # A path the user gave (--out, --cache, ...) that cannot be used as asked.
        print(f"error: cannot use {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            return _unexpected(exc)
        # Records are appended and flushed one at a time: what was finished is on disk, the rest runs on resume.
        where = f" writing {exc.filename}" if exc.filename else ""
        print(f"error: no space left on the device{where} ({exc.strerror or exc}); finished work is saved: free "
              "space and run the same command again to resume", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug, not bad input: still one line unless asked for more
        return _unexpected(exc)


def _unexpected(exc: Exception) -> int:
    """Exit 1 with one line for an exception nobody expected (the traceback under FRAMES_AGENT_DEBUG=1)."""
    if os.environ.get("FRAMES_AGENT_DEBUG"):
        raise exc
    if isinstance(exc, ModuleNotFoundError):  # an optional extra not installed: say which one
        from frames_agent.core.extras import install_hint

        if hint := install_hint(exc.name):
            print(f"error: {hint}", file=sys.stderr)
            return 2
    from frames_agent.core.terminal import plain

    print(f"error: unexpected {type(exc).__name__}: {plain(exc, lines=False)} (FRAMES_AGENT_DEBUG=1 shows the "
          "traceback)", file=sys.stderr)
    return 1


def _checked_args(argv: list[str]) -> list[str]:
    """argv, refusing text that is not UTF-8 (bytes Python could not decode), unless it names an existing path."""
    from frames_agent.core.errors import UsageError

    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            if not os.path.exists(arg):
                shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                raise UsageError(f"argument '{shown[:80]}' is not valid UTF-8 text") from None
    return argv


def _tolerant_streams() -> None:
    """Never die printing: odd characters are escaped when the terminal's encoding cannot show them."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


if __name__ == "__main__":
    sys.exit(main())
