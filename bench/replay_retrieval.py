"""Model-free replay of multistep retrieval under AgentConfig variants, on tune questions only (what it prints:
docs/agent.md, "Replaying retrieval without a model")."""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.answer_context import grid, load_run, recorded_config  # noqa: E402

_STEP = re.compile(r"Step (\d+) of \d+\. Documents found so far")


def model_queries(record: dict) -> list[list[str]]:
    """Each step's recorded model queries (without origins: those not filled), then its repeats (a variant decides)."""
    steps = []
    for step in record.get("steps", []):
        origins, filled = step.get("origins") or [], set(step.get("filled_queries") or [])
        queries = step.get("queries", [])
        steps.append([q for i, q in enumerate(queries)
                      if (origins[i] == "model" if i < len(origins) else q not in filled)]
                     + list(step.get("dropped_queries") or []))
    return steps


def planner(scripts: dict[str, list[list[str]]]):
    """A ScriptedLLM writing each question's scripted queries at each step (none for an unknown question)."""
    from frames_agent.agent.llm.testing import ScriptedLLM
    from frames_agent.eval.frames.split import normalise

    by_text = {normalise(q): steps for q, steps in scripts.items()}

    def respond(messages) -> dict:
        text = str(messages[-1].content)
        head = text[: text.rindex("\n\nEarlier queries")]
        question, step = head[head.rindex("\nQuestion: ") + len("\nQuestion: "):], int(_STEP.search(text).group(1))
        steps = by_text.get(normalise(question), [])
        return {"thought": "", "queries": steps[step - 1] if step <= len(steps) else []}

    return ScriptedLLM(responder=respond)


def load(args) -> tuple[list, dict[str, list[list[str]]], dict]:
    """(questions of the split, model queries by question text, recorded agent settings)."""
    from frames_agent.eval.frames.datasets import Question, load_questions
    from frames_agent.eval.frames.split import select

    if args.run is None:
        return load_questions(args.data, args.limit, args.split).questions, {}, {}
    config, kept = load_run(args.run)
    if config.get("system") != "multistep":
        raise SystemExit(f"error: {args.run} is not a multistep run")
    questions = select([Question(id=r["id"], prompt=r["question"], answer=r.get("gold_answer", ""),
                                 gold_titles=tuple(r.get("gold_titles", []))) for r in kept], args.split)
    return questions[: args.limit], {r["question"]: model_queries(r) for r in kept}, config.get("agent") or {}


def replay(questions, scripts: dict, settings: dict, override: dict, retriever) -> list:
    """QuestionRecords of the agent under settings + override, retrieval only, the planner scripted."""
    from frames_agent.agent.api import FramesAgent
    from frames_agent.eval.frames.records import QuestionRecord
    from frames_agent.eval.frames.runner import question_fields, result_fields
    from frames_agent.eval.frames.systems import CoverageChecker, SystemOutput

    config = recorded_config(settings, **{"prompt": "planning", **override})
    searcher = retriever
    if config.dense_weight > 0:
        from frames_agent.retrieval.dense import open_hybrid

        searcher = open_hybrid(retriever, config.dense_weight)  # needs `python cli.py index dense` first
    agent, coverage = FramesAgent(planner(scripts), searcher, config=config), CoverageChecker(retriever)
    records = []
    for question in questions:
        covered = asyncio.run(coverage.covered(question.gold_titles))
        output = SystemOutput(agent.invoke(question.prompt, answer=False))
        fields = result_fields(output, covered, question, coverage.aliases(question.gold_titles))
        records.append(QuestionRecord(**question_fields(question), system="multistep", **fields))
    return records


def row(name: str, records: list, curve: dict | None) -> dict:
    """The figures of one variant."""
    from frames_agent.eval.frames.budget import matched_budget
    from frames_agent.eval.frames.metrics import run_summary

    s = run_summary(records)
    out = {"setting": name, "questions": s.n, "covered_recall": s.covered_recall, "ci": s.covered_recall_ci,
           "by_step": s.covered_recall_by_step, "articles": s.articles_read, "gold_by_origin": s.gold_by_origin,
           "queries_by_origin": s.queries_by_origin, "articles_by_origin": s.articles_by_origin}
    if curve is not None:
        budget = matched_budget(records, curve)
        out.update(matched=budget.diff, matched_ci=budget.ci, matched_n=budget.n, bm25_at_budget=budget.bm25)
    return out


def dump(path: Path, setting: str, records: list) -> None:
    """Append each question's queries, their origins and the new articles of every step under `setting`."""
    with path.open("a", encoding="utf-8") as out:
        for record in records:
            steps = [{key: step.get(key) for key in ("queries", "origins", "new_doc_titles")} for step in record.steps]
            out.write(json.dumps({"setting": setting, "id": record.id, "steps": steps}) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", nargs="?", type=Path, default=None, help="a recorded multistep run (else no model)")
    parser.add_argument("--baseline", type=Path, default=None, help="a BM25-R(100) run of the same questions")
    parser.add_argument("--split", default="tune", choices=("tune", "check"))
    parser.add_argument("--report-only", action="store_true", help="measure only (allows --split check)")
    parser.add_argument("--data", default=None, help="questions without RUN_DIR (default: the dev split)")
    parser.add_argument("--index", default="default")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--grid", action="append", default=[], help="KEY=V1,V2 over AgentConfig fields (repeatable)")
    parser.add_argument("--json", action="store_true", help="one JSON object per variant")
    parser.add_argument("--dump", type=Path, default=None,
                        help="write each variant's queries and new articles per step, one JSON line a question")
    args = parser.parse_args(argv)

    from frames_agent.core.errors import FramesAgentError
    from frames_agent.eval.frames.budget import bm25_curve
    from frames_agent.eval.frames.runner import frames_run_dir
    from frames_agent.eval.frames.split import refuse_check
    from frames_agent.index.build import open_index

    try:
        refuse_check(args.split, "bench/replay_retrieval.py", args.report_only)
    except FramesAgentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    questions, scripts, settings = load(args)
    curve = None
    if args.baseline:
        base = frames_run_dir(args.baseline)
        depth = int((base.read_config() or {}).get("agent", {}).get("n_docs", 100))
        curve = bm25_curve(base.load_records()[0].values(), depth)
    retriever = open_index(args.index, progress=False)
    source = f"model queries of {args.run}" if args.run else "no model (question, then proposer)"
    print(f"{len(questions)} {args.split} question(s); {source}", file=sys.stderr)
    for override in grid(args.grid):
        try:
            records = replay(questions, scripts, settings, override, retriever)
        except FramesAgentError as exc:  # e.g. a dense weight without the index's dense vectors
            print(f"error: {exc}", file=sys.stderr)
            retriever.close()
            return 2
        result = row(json.dumps(override) if override else "recorded settings", records, curve)
        if args.dump:
            dump(args.dump, result["setting"], records)
        if args.json:
            print(json.dumps(result))
            continue
        ci = f"[{result['ci'][0]:.3f}-{result['ci'][1]:.3f}]" if result["ci"] else ""
        steps = " ".join(f"{v:.3f}" for v in result["by_step"] if v is not None)
        line = (f"{result['setting']:<48} n={result['questions']:<4} covered recall {result['covered_recall']:.3f} "
                f"{ci}  by step {steps}  articles {result['articles']:.1f}  gold by origin {result['gold_by_origin']}")
        if curve is not None:
            line += (f"  matched budget {result['matched']:+.3f} [{result['matched_ci'][0]:+.3f}, "
                     f"{result['matched_ci'][1]:+.3f}] (BM25-R {result['bm25_at_budget']:.3f}, n={result['matched_n']})")
        print(line)
    retriever.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
