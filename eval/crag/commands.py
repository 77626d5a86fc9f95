"""CLI: `crag-server` (the compatible CRAG mock API) and `crag` (run and score the CRAG benchmark)."""
from __future__ import annotations

import argparse


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
                      help="judge model spec for non-exact answers; 'none' = exact match only (default: --model)")
    crag.add_argument("--limit", type=int, default=None, help="first N rows only")
    crag.add_argument("--out", default="runs/crag", help="output dir: results.jsonl (resumable) and summary.json")
    crag.add_argument("--k", type=int, default=None, help="queries per step; --k or --n runs the planning loop "
                                                          "(task 1 default: one answer call on BM25(question) chunks)")
    crag.add_argument("--n", type=int, default=None, help="planning steps (default 1)")
    crag.add_argument("--n-docs", type=int, default=None, help="chunks fetched per query (default 10)")
    crag.add_argument("--server", default=None, help="CRAG API server for task 2 (default: CRAG_SERVER or "
                                                     "http://127.0.0.1:8000; started locally when none answers)")
    crag.set_defaults(handler=run_crag)


def run_server(args: argparse.Namespace) -> int:
    """Serve the compatible CRAG API until interrupted."""
    from retrieval.crag.server import serve

    serve(args.data, args.host, args.port)
    return 0


def run_crag(args: argparse.Namespace) -> int:
    """Run the CRAG benchmark over rows and print the score table."""
    from eval.crag.runner import run_from_args

    return run_from_args(args)
