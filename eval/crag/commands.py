"""CLI: `crag-server` (the compatible CRAG mock API) and `crag` (run and score the CRAG benchmark)."""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from frames_agent.core.errors import FramesAgentError


def register(sub: argparse._SubParsersAction) -> None:
    """Add the crag and crag-server subcommands."""
    server = sub.add_parser("crag-server", help="serve the CRAG mock API (38 routes) from local data files",
                            description="A CRAG mock API compatible server: the real company table and recorded "
                                        "replies of the official server. Point CRAG_SERVER at it.")
    server.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    server.add_argument("--port", type=int, default=8000, help="port (default 8000, the official server's)")
    server.add_argument("--data", default=None, help="data dir with company_name.dict and "
                                                     "example_call_responses.json (default: shared CRAG data)")
    server.set_defaults(handler=run_server)

    crag = sub.add_parser("crag", help="answer and score CRAG questions (task 1: pages; task 2: pages + KG tools)")
    crag.add_argument("--data", default=None, help="CRAG rows, .jsonl or .jsonl.bz2 (default: the 10 shared dev rows)")
    crag.add_argument("--task", type=int, choices=(1, 2), default=1,
                      help="1: the row's 5 web pages only; 2: pages plus the CRAG KG tools (default 1)")
    crag.add_argument("--model", default=None, help="answering model spec (default: the embedded local model)")
    crag.add_argument("--judge", default=None,
                      help="judge model spec for non-exact answers (default: --model); 'none' = exact match only: other "
                           "answers are unrated, never incorrect (rate them later: rejudge OUT --judge SPEC)")
    crag.add_argument("--limit", type=int, default=None, help="first N rows only")
    crag.add_argument("--out", default="runs/crag", help="output dir: results.jsonl (resumable) and summary.json")
    crag.add_argument("--k", type=int, default=None, help="queries per step; --k or --n runs the planning loop "
                                                          "(task 1 default: one answer call on BM25(question) chunks)")
    crag.add_argument("--n", type=int, default=None, help="planning steps (default 1)")
    crag.add_argument("--n-docs", type=int, default=None, help="chunks fetched per query (default 10)")
    crag.add_argument("--server", default=None, help="CRAG API server for task 2 (default: CRAG_SERVER or "
                                                     "http://127.0.0.1:8000; started locally when none answers)")
    from frames_agent.agent.commands import add_deadline_flags

    add_deadline_flags(crag)
    crag.set_defaults(handler=run_crag)


def run_server(args: argparse.Namespace) -> int:
    """Serve the compatible CRAG API until interrupted; a bad or busy port fails before the data loads."""
    from frames_agent.core.sockets import bind, serve_on, url_of
    from frames_agent.retrieval.crag.server import create_app

    with bind(args.host, args.port) as sock:
        app = create_app(args.data)
        serve_on(app, sock, f"CRAG API server on {url_of(sock, args.host)} (data: {app.state.backend.data_dir}); "
                 "Ctrl-C stops", access_log=False)
    return 0


def default_rows() -> Path:
    """The 10 shared CRAG dev rows (the `crag --data` default)."""
    from frames_agent.core.paths import shared_dir

    return shared_dir() / "data" / "crag" / "crag_example_dev.jsonl.bz2"



def kg_source(server_arg: str | None, process: Any) -> str:
    """The KG behind the tools: the local recordings (when the compatible server was started) or the server URL."""
    if process is not None:
        return (f"local recordings (compatible server at {process.url}: company table and recorded replies only; "
                "not the CRAG KG, so these are not CRAG task-2 scores)")
    from frames_agent.retrieval.crag.client import CRAGClient

    return f"CRAG_SERVER {CRAGClient(server_arg or os.environ.get('CRAG_SERVER')).server}"


def crag_tools_for(server: str | None, start: Callable[[], Any] | None = None) -> tuple[list, Any]:
    """All 38 KG tools on a server that answers; with no server configured, a local compatible one is started."""
    from frames_agent.retrieval.crag.client import CRAGClient
    from frames_agent.retrieval.crag.tools import crag_tools

    explicit = server or os.environ.get("CRAG_SERVER")
    client = CRAGClient(explicit)
    if client.ping():
        return crag_tools(client), None
    if explicit:
        raise FramesAgentError(f"no CRAG API server answers at {client.server}; start one (python cli.py crag-server) "
                               "or unset CRAG_SERVER to let `crag` start the local compatible server")
    from frames_agent.retrieval.crag.server import ServerProcess

    process = (start or ServerProcess)()
    print(f"note: no CRAG server at {client.server}; started the local compatible server at {process.url} "
          "(company table + recorded replies only; run the official server for the full KG)", file=sys.stderr)
    return crag_tools(CRAGClient(process.url)), process


def run_crag(args: argparse.Namespace) -> int:
    """The `crag` command: resolve models and tools from flags, run, print the score table."""
    from frames_agent.agent.llm import DEFAULT_MODEL, resolve_model
    from frames_agent.eval.crag.runner import CragSettings, crag_agent_config, run
    from frames_agent.eval.crag.score import format_table
    from frames_agent.eval.errors import EvalError

    model = args.model or DEFAULT_MODEL
    judge_spec = args.judge or model
    settings = CragSettings(task=args.task, k=args.k, n=args.n, n_docs=10 if args.n_docs is None else args.n_docs,
                            limit=args.limit, model=model, judge=judge_spec, timeout=args.timeout,
                            question_timeout=args.question_timeout)
    if args.limit is not None and args.limit < 1:
        raise FramesAgentError("--limit must be at least 1")
    config = crag_agent_config(settings)  # bad --k/--n/--n-docs fail here, before a model is loaded
    data = Path(args.data) if args.data else default_rows()
    if not data.is_file():
        raise FramesAgentError(f"no CRAG data file {data}")
    llm = resolve_model(model, cache=True, timeout=config.timeout)
    judge = None if judge_spec == "none" else (llm if judge_spec == model else
                                               resolve_model(judge_spec, cache=True, timeout=config.timeout))
    tools, server = crag_tools_for(args.server) if args.task == 2 else ([], None)
    try:
        summary = run(data, args.out, llm, judge, settings, tools, kg=kg_source(args.server, server),
                      agent_config=config)
    finally:
        if server is not None:
            server.stop()
    print(format_table(summary))
    print(f"results: {Path(args.out) / 'results.jsonl'}  summary: {Path(args.out) / 'summary.json'}", file=sys.stderr)
    if summary.rows and summary.errors + len(summary.unscorable) >= summary.rows:
        first = (summary.unscorable or ["see results.jsonl"])[0]
        raise EvalError(f"every CRAG row failed ({summary.rows} of {summary.rows}; first: {first})")
    return 0
