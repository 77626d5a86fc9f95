"""CRAG runner: answer CRAG rows with FramesAgent (task 1: the row's pages; task 2: pages + KG tools) and score them.

Results go to OUT/results.jsonl, one line per row as soon as it is done; a rerun skips rows already answered
without error (so an interrupted run resumes, and failed rows are retried). OUT/summary.json holds the metrics.
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from agent.llm.spec import DEFAULT_MODEL
from eval.crag.pages import ChunkRetriever, page_documents
from eval.crag.rows import CragRow, RowError, iter_rows
from eval.crag.score import format_table, score_prediction, summarize
from retrieval.errors import FramesAgentError
from retrieval.paths import shared_dir

NO_TIME = "an unknown time"


def default_data() -> Path:
    """The 10 shared CRAG dev rows."""
    return shared_dir() / "data" / "crag" / "crag_example_dev.jsonl.bz2"


@dataclass
class CragSettings:
    """How rows are answered. Task 1 without --k/--n answers from BM25(question) over the chunks in one call."""

    task: int = 1
    k: int | None = None
    n: int | None = None
    n_docs: int = 10
    limit: int | None = None
    model: str = "scripted"
    judge: str = "none"
    chunk_words: int = 100

    @property
    def agent_loop(self) -> bool:
        """Whether the planning loop runs (task 2 needs it to call tools)."""
        return self.task == 2 or self.k is not None or self.n is not None


def agent_config(settings: CragSettings):
    """AgentConfig with the CRAG prompts and budgets sized for the model."""
    from pydantic import ValidationError

    from agent.config import AgentConfig

    try:
        k = settings.k if settings.k is not None else (2 if settings.task == 2 else 1)
        return AgentConfig.for_model(settings.model, k=k, n=1 if settings.n is None else settings.n,
                                     n_docs=settings.n_docs, prompt="crag_planning",
                                     answer_prompt="crag_answer", variables={"query_time": NO_TIME})
    except ValidationError as exc:
        err = exc.errors()[0]
        raise FramesAgentError(f"--{'-'.join(map(str, err['loc'])).replace('_', '-')}: {err['msg']}") from None


def answer_row(row: CragRow, llm: BaseChatModel, tools: Sequence[BaseTool], settings: CragSettings, config) -> dict:
    """Answer one row; the record has the prediction, what was retrieved, and cost. Raises on agent failure."""
    from agent.api import FramesAgent

    docs, stats = page_documents(row.interaction_id, row.pages, settings.chunk_words)
    retriever = ChunkRetriever(docs)
    agent = FramesAgent(llm, retriever, tools, config)
    variables = {"query_time": row.query_time or NO_TIME}
    if settings.agent_loop:
        result = agent.invoke(row.query, variables=variables)
    else:
        result = agent.answer_from(row.query, retriever.search(row.query, config.n_docs), variables=variables)
    return {"prediction": result.answer, "raw_answer": result.raw_answer[:4000],
            "documents": [{"id": d.id, "title": d.title[:100], "source": d.source} for d in result.documents],
            "tool_calls": [c.model_dump() for s in result.steps for c in s.tool_calls],
            "step_errors": [e for s in result.steps for e in s.errors],
            "pages": {k: v for k, v in asdict(stats).items() if k != "warnings"},
            "warnings": row.warnings + stats.warnings, "llm_calls": result.llm_calls,
            "tokens": result.tokens.model_dump(), "seconds": round(result.seconds, 2)}


def _base_record(row: CragRow, settings: CragSettings) -> dict[str, Any]:
    return {"row": row.index, "interaction_id": row.interaction_id, "domain": row.domain,
            "question_type": row.question_type, "static_or_dynamic": row.static_or_dynamic, "query": row.query,
            "query_time": row.query_time, "answer": row.answer, "alternative_answers": row.alternatives,
            "task": settings.task, "model": settings.model, "judge": settings.judge, "error": None}


def process_row(row: CragRow, llm: BaseChatModel, judge: BaseChatModel | None, tools: Sequence[BaseTool],
                settings: CragSettings, config) -> dict[str, Any]:
    """Answer and score one row; an agent failure becomes a recorded error scored as missing."""
    record = _base_record(row, settings)
    try:
        record.update(answer_row(row, llm, tools, settings, config))
    except Exception as exc:  # one bad row (LLM down, broken page, bug) must not end the run
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        record.update(prediction="", error=f"{type(exc).__name__}: {message}", warnings=row.warnings)
    verdict = score_prediction(row.query, record["prediction"], row.answer, row.alternatives, judge=judge)
    record.update(outcome=verdict.outcome, method="error" if record["error"] else verdict.method,
                  scored_prediction=verdict.prediction, judge_replies=verdict.judge_replies,
                  judge_explanation=verdict.explanation)
    return record


def read_results(path: Path) -> list[dict[str, Any]]:
    """Records of earlier runs; a half-written last line (a crash mid-write) is ignored."""
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "interaction_id" in record:
            records.append(record)
    return records


def _check_compatible(records: list[dict[str, Any]], settings: CragSettings, out: Path) -> None:
    for r in records:
        if r.get("task") != settings.task or r.get("model") != settings.model:
            raise FramesAgentError(f"{out} holds results of task {r.get('task')} with model {r.get('model')}; "
                                   f"use another --out for task {settings.task} with {settings.model}")


def run(data: str | Path, out: str | Path, llm: BaseChatModel, judge: BaseChatModel | None, settings: CragSettings,
        tools: Sequence[BaseTool] = (), log: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True)) -> dict:
    """Answer and score rows, appending to OUT/results.jsonl (resumable); returns and writes the summary."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.jsonl"
    earlier = read_results(results_path)
    _check_compatible(earlier, settings, out)
    latest = {r["interaction_id"]: r for r in earlier}
    config = agent_config(settings)
    selected, skipped, started = [], 0, time.perf_counter()
    with open(results_path, "a", encoding="utf-8") as sink:
        for item in iter_rows(data):
            if settings.limit is not None and len(selected) >= settings.limit:
                break
            selected.append(item.interaction_id)
            done = latest.get(item.interaction_id)
            if isinstance(item, CragRow) and done and not done.get("error"):
                skipped += 1
                continue
            if isinstance(item, RowError):
                record = {"row": item.index, "interaction_id": item.interaction_id, "task": settings.task,
                          "model": settings.model, "outcome": None, "error": item.message}
            else:
                record = process_row(item, llm, judge, tools, settings, config)
            sink.write(json.dumps(record, ensure_ascii=False) + "\n")
            sink.flush()
            latest[item.interaction_id] = record
            log(_progress(len(selected), record))
    records = [latest[i] for i in dict.fromkeys(selected)]
    summary = {"data": str(data), "task": settings.task, "model": settings.model, "judge": settings.judge,
               "settings": asdict(settings), "rows": len(records), "resumed": skipped,
               "unscorable": [r["error"] for r in records if r.get("outcome") is None],
               "seconds": round(time.perf_counter() - started, 1), **summarize(records)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return summary


def _progress(i: int, record: dict[str, Any]) -> str:
    if record.get("outcome") is None:
        return f"[{i}] error: {record['error']}"
    note = f"  error: {record['error']}" if record.get("error") else ""
    return (f"[{i}] {record.get('domain')}/{record.get('question_type')}: {record['outcome']} ({record['method']})"
            f" {record.get('prediction', '')[:60]!r}{note}")


def crag_tools_for(server: str | None, start: Callable[[], Any] | None = None) -> tuple[list[BaseTool], Any]:
    """All 38 KG tools on a server that answers; with no server configured, a local compatible one is started."""
    from retrieval.crag.client import CRAGClient
    from retrieval.crag.tools import crag_tools

    explicit = server or os.environ.get("CRAG_SERVER")
    client = CRAGClient(explicit)
    if client.ping():
        return crag_tools(client), None
    if explicit:
        raise FramesAgentError(f"no CRAG API server answers at {client.server}; start one (python cli.py crag-server) "
                               "or unset CRAG_SERVER to let `crag` start the local compatible server")
    from retrieval.crag.server import ServerProcess

    process = (start or ServerProcess)()
    print(f"note: no CRAG server at {client.server}; started the local compatible server at {process.url} "
          "(company table + recorded replies only; run the official server for the full KG)", file=sys.stderr)
    return crag_tools(CRAGClient(process.url)), process


def run_from_args(args: Any) -> int:
    """The `crag` command: resolve models and tools from flags, run, print the table."""
    from agent.llm import resolve_model

    model = args.model or DEFAULT_MODEL
    judge_spec = args.judge or model
    settings = CragSettings(task=args.task, k=args.k, n=args.n, n_docs=10 if args.n_docs is None else args.n_docs,
                            limit=args.limit, model=model, judge=judge_spec)
    if args.limit is not None and args.limit < 1:
        raise FramesAgentError("--limit must be at least 1")
    agent_config(settings)  # bad --k/--n/--n-docs fail here, before a model is loaded
    data = Path(args.data) if args.data else default_data()
    if not data.is_file():
        raise FramesAgentError(f"no CRAG data file {data}")
    llm = resolve_model(model, cache=True)
    judge = None if judge_spec == "none" else (llm if judge_spec == model else resolve_model(judge_spec, cache=True))
    tools, server = crag_tools_for(args.server) if args.task == 2 else ([], None)
    try:
        summary = run(data, args.out, llm, judge, settings, tools)
    finally:
        if server is not None:
            server.stop()
    print(format_table(summary))
    print(f"results: {Path(args.out) / 'results.jsonl'}  summary: {Path(args.out) / 'summary.json'}", file=sys.stderr)
    return 0
