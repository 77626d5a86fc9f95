"""Model-free replay of what the answer reads: each recorded question's context rebuilt and its answer prompt
re-rendered under other selection settings (what it prints: docs/benchmarks.md)."""
from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from frames_agent.agent.config import AgentConfig


def grid(specs: list[str]) -> list[dict]:
    """Every combination of KEY=V1,V2 specs (AgentConfig fields, values read as --set reads them), as override dicts."""
    from frames_agent.agent.config import AgentConfig
    from frames_agent.agent.settings import parse_settings

    axes = []
    for spec in specs:
        key, _, values = spec.partition("=")
        axes.append([f"{key}={v}" for v in values.split(",") if v.strip()])
    return [parse_settings(list(combo), set(AgentConfig.model_fields)) for combo in itertools.product(*axes)]


def recorded_config(settings: dict, **override: object) -> AgentConfig:
    """The AgentConfig of a run's recorded settings (fields this release does not know dropped) and the override."""
    from frames_agent.agent.config import AgentConfig

    return AgentConfig(**{**{k: v for k, v in settings.items() if k in AgentConfig.model_fields}, **override})


def rebuild(record: dict, system: str, agent_cfg: dict, retriever) -> tuple[list, list[str]]:
    """(context entries, step queries) of a recorded question, rebuilt by searching its recorded queries again."""
    from frames_agent.retrieval import context as ctx

    context: list = []
    queries: list[str] = []
    if system == "oracle":
        docs = [d for d in (retriever.by_title(t) for t in (record.get("oracle") or {}).get("found", [])) if d]
        ctx.merge(context, list(enumerate(docs)), step=0)
        return context, queries
    cfg = recorded_config(agent_cfg)
    for step in record.get("steps", []):
        origins, depths, hits = step.get("origins") or [], step.get("query_depths") or [], step.get("query_hits") or []
        if not depths and "repeat" in origins and len(hits) == len(origins):  # recorded before depths were
            depths = [n if o == "repeat" else 0 for n, o in zip(hits, origins)]
        queries_run = step.get("queries", [])
        sizes = ([cfg.n_docs] * len(queries_run) if system == "bm25"
                 else cfg.step_hits(len(queries_run), origins, depths, step.get("step", 1)))
        found = []
        for query, size in zip(queries_run, sizes):
            found += list(enumerate(retriever.search(query, size)))
        # As the merge node reads them: a repeat's own depth, and the context's bound when the run set one.
        ctx.merge(context, found, step=step.get("step", 1))
        queries += [q for q in queries_run if system != "bm25"]
    return context, queries


def load_run(run: Path) -> tuple[dict, list[dict]]:
    """A recorded run's config.json and its records that did not fail (a later line for an id wins), read bounded."""
    from frames_agent.core.bounded import load_file, loads, read_file

    records = {}
    for line in read_file(run / "results.jsonl", 1 << 30).splitlines():
        if line.strip():
            record = loads(line)
            records[record["id"]] = record
    return load_file(run / "config.json"), [r for r in records.values() if not r.get("failed")]


def replay(runs: list[Path], index: str, overrides: list[dict]) -> list[dict]:
    """Rows of figures: one per (run, setting)."""
    from frames_agent.agent.api import FramesAgent
    from frames_agent.agent.llm.testing import ScriptedLLM
    from frames_agent.eval.frames.datasets import normalize_title
    from frames_agent.eval.frames.metrics import answer_figures
    from frames_agent.eval.stats import bootstrap_ci
    from frames_agent.index.build import open_index

    retriever = open_index(index, progress=False)
    rows = []
    for run in runs:
        config, records = load_run(run)
        system, agent_cfg = config.get("system", "multistep"), config.get("agent") or {}
        contexts = [rebuild(r, system, agent_cfg, retriever) for r in records]
        # Normalised titles of each rebuilt context, once: every setting below reads them.
        helds = [{normalize_title(e.title) for e in context} for context, _ in contexts]
        # Share of each record's covered gold titles that its rebuilt context holds.
        covered = [sum(normalize_title(t) in held for t in r["covered_titles"]) / len(r["covered_titles"])
                   for r, held in zip(records, helds) if r.get("covered_titles")]
        for override in overrides:
            cfg = recorded_config(agent_cfg, **override)
            nodes = FramesAgent(ScriptedLLM([]), retriever, config=cfg).nodes
            recall, in_prompt, shown, seconds = [], [], [], []
            for record, (context, queries), held in zip(records, contexts, helds):
                started = time.perf_counter()
                rendered = nodes._passages(record["question"], context, queries, cfg.answer_budget)
                seconds.append(time.perf_counter() - started)
                found = {t: (1 if normalize_title(t) in held else None) for t in record.get("gold_titles", [])}
                figures = answer_figures(record.get("gold_titles", []), record.get("covered_titles"), found,
                                         record.get("gold_answer", ""),
                                         {"budget": cfg.answer_budget, "shown_titles": rendered.shown_titles,
                                          "text": rendered.text})
                if figures["answer_context_recall"] is not None:
                    recall.append(figures["answer_context_recall"])
                in_prompt.append(float(bool(figures["answer_in_prompt"])))
                shown.append(len(figures["gold_shown"] or []))
            rows.append({"run": run.name, "system": system, "setting": override or "run's own",
                         "questions": len(records), "answer_context_recall": statistics.fmean(recall) if recall else None,
                         "recall_ci": bootstrap_ci(recall), "answer_in_prompt": statistics.fmean(in_prompt),
                         "in_prompt_ci": bootstrap_ci(in_prompt), "gold_shown": statistics.fmean(shown),
                         "articles": statistics.fmean(len(c) for c, _ in contexts),
                         "covered_recall": statistics.fmean(covered) if covered else None,
                         "seconds": statistics.fmean(seconds)})
    retriever.close()
    return rows


def _ci(ci) -> str:
    return f"[{ci[0]:.2f}-{ci[1]:.2f}]" if ci else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--index", default="default")
    parser.add_argument("--grid", action="append", default=[], help="KEY=V1,V2 over AgentConfig fields (repeatable)")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    parser.add_argument("--report-only", action="store_true", help="measure only (allows runs of --split check)")
    args = parser.parse_args(argv)
    from frames_agent.core.bounded import load_file
    from frames_agent.core.errors import FramesAgentError
    from frames_agent.eval.frames.split import refuse_check

    try:
        for run in args.runs:
            split = load_file(run / "config.json").get("split", "all")
            refuse_check(split, "bench/answer_context.py", args.report_only)
    except (FramesAgentError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for row in replay(args.runs, args.index, grid(args.grid)):
        if args.json:
            print(json.dumps(row))
            continue
        recall = "n/a" if row["answer_context_recall"] is None else f"{row['answer_context_recall']:.3f}"
        print(f"{row['run']:<24} {str(row['setting']):<60} n={row['questions']:<3} articles={row['articles']:5.1f} "
              f"covered recall {row['covered_recall'] if row['covered_recall'] is None else round(row['covered_recall'], 3)} "
              f"answer-context recall {recall} {_ci(row['recall_ci'])}  gold shown {row['gold_shown']:.2f}  "
              f"answer in prompt {row['answer_in_prompt']:.3f} {_ci(row['in_prompt_ci'])}  "
              f"selection {row['seconds'] * 1000:.0f} ms/question")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
