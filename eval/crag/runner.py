"""CRAG runner: answer rows with FramesAgent (task 1: the row's pages; task 2: pages + KG tools) and score them, one
CragRecord a row in OUT/results.jsonl keyed by its position; a rerun resumes and retries the failed rows."""
from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from frames_agent.eval.crag.rows import ChunkRetriever, CragRow, RowError, iter_rows, page_articles, page_documents
from frames_agent.eval.crag.score import CragJudge, CragRecord, CragSummary, figures
from frames_agent.eval.errors import EvalError
from frames_agent.eval.judge import Judge, Verdict, judge_label
from frames_agent.eval.rundir import SUMMARY_FILE, RunDir, file_fingerprint

if TYPE_CHECKING:
    from frames_agent.agent.config import AgentConfig

NO_TIME = "an unknown time"
# Retired scoring options (docs/measurements.md) at the value that scores as every run does now.
RETIRED = {"scoring": "official", "alternatives": False}


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
    timeout: float | None = None  # per LLM request; None: the model's default
    question_timeout: float | None = None  # per row; None: the model's default


def crag_agent_config(settings: CragSettings) -> AgentConfig:
    """AgentConfig with the CRAG prompts and budgets sized for the model."""
    from frames_agent.agent.settings import AgentSettings

    k = settings.k if settings.k is not None else (2 if settings.task == 2 else 1)
    n = 1 if settings.n is None else settings.n
    return AgentSettings.from_flags(asdict(settings), k=k, n=n, prompt="crag_planning", answer_prompt="crag_answer",
                                    variables={"query_time": NO_TIME}).config


def crag_run_dir(path: Path) -> RunDir[CragRecord]:
    """A CRAG run directory: CragRecords keyed by row number."""
    return RunDir(path, CragRecord.model_validate, lambda r: str(r.row))


def run_config(settings: CragSettings, data: Path, agent_config: AgentConfig) -> dict:
    """What two runs must share to write into one OUT: the settings but --limit, the agent's config, the data's hash."""
    # Deadlines may change between a run and its resumption, like --limit.
    loose = {"limit", "timeout", "question_timeout"}
    fields = {k: v for k, v in asdict(settings).items() if k not in loose}
    return {"kind": "crag", **fields, "agent": agent_config.model_dump(exclude=loose),
            "data_fingerprint": file_fingerprint(data), "info": {"data": str(data)}}


def check_retired(config: dict | None, path: Path) -> None:
    """A run recorded with a retired scoring option resumes at its official value and is refused at another."""
    for key, kept in RETIRED.items():
        if config and config.get(key, kept) != kept:
            raise EvalError(f"{path} was scored with the retired {key} {config[key]!r} (now always {kept!r}); "
                            "use another --out")


def answer_row(row: CragRow, llm: BaseChatModel, tools: Sequence[BaseTool], settings: CragSettings, config) -> dict:
    """Answer one row; the record has the prediction, what was retrieved, and cost. Raises on agent failure."""
    from frames_agent.agent.api import FramesAgent

    docs, stats = page_documents(row.interaction_id, row.pages, settings.chunk_words)
    retriever = ChunkRetriever(docs)
    agent = FramesAgent(llm, retriever, tools, config)
    variables = {"query_time": row.query_time or NO_TIME}
    if settings.task == 2 or settings.k is not None or settings.n is not None:  # the planning loop (tools need it)
        result = agent.invoke(row.query, variables=variables)
    else:
        # Context-wide selection ranks every chunk of the five pages and fills the answer budget; without passages
        # the answer reads the n_docs chunks BM25 ranks first.
        given = page_articles(docs) if config.answer_passages else retriever.search(row.query, config.n_docs)
        result = agent.answer_from(row.query, given, variables=variables)
    return {"prediction": result.answer, "raw_answer": result.raw_answer[:4000],
            "documents": [{"id": d.id, "title": d.title[:100], "source": d.source} for d in result.documents],
            "tool_calls": [c.model_dump() for s in result.steps for c in s.tool_calls],
            "step_errors": [e for s in result.steps for e in s.errors],
            "pages": {k: v for k, v in asdict(stats).items() if k != "warnings"},
            "warnings": row.warnings + stats.warnings, "llm_calls": result.llm_calls,
            "tokens": result.tokens.model_dump(), "seconds": round(result.seconds, 2)}


def process_row(row: CragRow, llm: BaseChatModel, judge: Judge, tools: Sequence[BaseTool],
                settings: CragSettings, config) -> CragRecord:
    """Answer and score one row; an agent failure becomes a recorded error scored as missing."""
    fields = {"row": row.index, "interaction_id": row.interaction_id, "domain": row.domain,
              "question_type": row.question_type, "static_or_dynamic": row.static_or_dynamic, "query": row.query,
              "query_time": row.query_time, "answer": row.answer,
              "task": settings.task, "model": settings.model, "judge": settings.judge, "error": None}
    try:
        fields.update(answer_row(row, llm, tools, settings, config))
    except Exception as exc:  # one bad row (LLM down, broken page, bug) must not end the run
        from frames_agent.agent.llm.errors import redact  # no keys or URL credentials in results

        message = redact(str(exc).splitlines()[0]) if str(exc) else type(exc).__name__
        fields.update(prediction="", error=f"{type(exc).__name__}: {message}", warnings=row.warnings)
    record = CragRecord.model_validate(fields)
    if record.error:  # no answer was produced, so none is judged (an empty answer would be, officially)
        return record.scored(Verdict(outcome="missing", method="error", judge=judge.name))
    return record.scored(judge.rate(row.query, record.answer, record.prediction))


def _rows(data: Path) -> Iterator[CragRow | RowError]:
    """The data's rows; refuses (before anything is written) a file without a single readable CRAG row."""
    items = iter_rows(data)
    seen: list[CragRow | RowError] = []
    for item in items:
        seen.append(item)
        if isinstance(item, CragRow):
            return itertools.chain(seen, items)
    why = f" (first problem: {seen[0].message})" if seen and isinstance(seen[0], RowError) else " (the file is empty)"
    raise EvalError(f"{data} holds no CRAG rows: expected JSON lines with query and answer{why}")


def run(data: str | Path, out: str | Path, llm: BaseChatModel, judge: BaseChatModel | Judge | None,
        settings: CragSettings, tools: Sequence[BaseTool] = (),
        log: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True),
        kg: str | None = None, agent_config: AgentConfig | None = None) -> CragSummary:
    """Answer and score rows into OUT/results.jsonl (locked, resumable; `kg` names the tools' KG); the summary."""
    agent_config = agent_config or crag_agent_config(settings)
    data, run_dir = Path(data), crag_run_dir(Path(out))
    if not isinstance(judge, Judge):
        judge = CragJudge(judge, settings.judge)
    with run_dir.locked():
        config = run_config(settings, data, agent_config)
        config["info"]["kg"] = kg_label(settings, kg)
        check_retired(run_dir.read_config(), run_dir.path)
        run_dir.check_config(config, unknown=tuple(RETIRED))
        items = _rows(data)
        records, notes = run_dir.load_records()
        for note in notes:
            log(f"note: {note}")
        config = run_dir.write_config(config)
        return _run_rows(items, records, run_dir, config, llm, judge, tools, settings, agent_config, log)


def _run_rows(items, records: dict[str, CragRecord], run_dir: RunDir, recorded: dict, llm, judge: Judge, tools,
              settings, config: AgentConfig, log):
    selected: list[str] = []
    ids: dict[str, int] = {}
    repeated, skipped, started = [], 0, time.perf_counter()
    for item in items:
        if settings.limit is not None and len(selected) >= settings.limit:
            break
        key = str(item.index)
        selected.append(key)
        if item.interaction_id in ids:  # both rows are run and scored: rows are keyed by line, not id
            repeated.append(item.interaction_id)
            log(f"note: interaction_id {item.interaction_id} repeats (data rows {ids[item.interaction_id] + 1} and "
                f"{item.index + 1}); both are scored, each under its own row")
        ids.setdefault(item.interaction_id, item.index)
        done = records.get(key)
        if isinstance(item, CragRow) and done and not done.error:
            skipped += 1
            continue
        if isinstance(item, RowError):
            record = CragRecord(row=item.index, interaction_id=item.interaction_id, task=settings.task,
                                model=settings.model, judge=settings.judge, error=item.message)
        else:
            record = process_row(item, llm, judge, tools, settings, config)
        run_dir.append(record)
        records[key] = record
        log(_progress(len(selected), record))
    return summarize_run([records[k] for k in dict.fromkeys(selected)], settings, recorded, run_dir,
                         resumed=skipped, repeated=repeated, seconds=time.perf_counter() - started)


def summarize_run(records: list[CragRecord], settings: CragSettings, config: dict, run_dir: RunDir, *,
                  resumed: int = 0, repeated: Sequence[str] = (), seconds: float = 0.0) -> CragSummary:
    """The typed summary of a CRAG run over its records (its data, judges and KG from config.json), written."""
    info = config.get("info", {})
    summary = CragSummary(**figures(records).model_dump(), data=info.get("data", ""), task=settings.task,
                          model=settings.model, judge=judge_label(settings.judge, config),
                          kg=info.get("kg") or kg_label(settings, None), settings=asdict(settings), rows=len(records),
                          resumed=resumed, unscorable=[r.error for r in records if r.outcome is None],
                          repeated_ids=sorted(set(repeated)), seconds=round(seconds, 1))
    run_dir.write(SUMMARY_FILE, summary.model_dump_json(indent=2) + "\n")
    return summary


def kg_label(settings: CragSettings, kg: str | None) -> str:
    """Which KG answered: task 1 has none; task 2 names the server URL or the local recordings."""
    if settings.task != 2:
        return "none (task 1: web pages only)"
    return kg or "unknown (tools passed in by the caller)"


def refresh_summary(run_dir: RunDir[CragRecord], config: dict) -> CragSummary:
    """Summarize every record of a finished run directory again (after rejudge, or for `report`)."""
    settings = CragSettings(**{f.name: config[f.name] for f in fields(CragSettings) if f.name in config})
    records, _ = run_dir.load_records()
    return summarize_run(sorted(records.values(), key=lambda r: r.row), settings, config, run_dir)


def _progress(i: int, record: CragRecord) -> str:
    if record.outcome is None:
        return f"[{i}] error: {record.error}"
    note = f"  error: {record.error}" if record.error else ""
    return (f"[{i}] {record.domain}/{record.question_type}: {record.outcome} ({record.method})"
            f" {record.prediction[:60]!r}{note}")
