"""Benchmark: AgentConfig settings side by side with the embedded model, each arm on its own llama.cpp runtime,
interleaved question by question in one run (so machine load falls on every arm alike).

Arms are named override sets, e.g. "base:;lean:plan_thought_chars=0,plan_budget=200,plan_sentences=1". For each
of the questions --offset .. --offset+--questions of --split (a rule, not a pick; choose settings on `tune`, report on
`check`), every arm runs the question (retrieval only unless --answer) and the bench prints its seconds, model
calls, tokens read and generated, and gold recall; then per arm the medians and totals, the ratio of total seconds
against the first arm, and recall with its paired difference against the first arm (a 95% paired bootstrap interval
and a sign-flip p, as `compare` prints them).

    python bench/arms.py --arms "base:;thought0:plan_thought_chars=0" [--questions 12] [--split tune] [--answer]
                         [--data held-out.tsv --split all]
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.question import measure  # noqa: E402
from frames_agent.agent import AgentConfig, FramesAgent  # noqa: E402
from frames_agent.agent.llm import DEFAULT_MODEL, resolve_model  # noqa: E402
from frames_agent.agent.llm.providers.local import RuntimePool, RuntimeSettings  # noqa: E402
from frames_agent.eval.stats import compare_paired_means  # noqa: E402


def parse_arms(text: str) -> dict[str, dict]:
    """'name:key=value,key=value;name2:' -> overrides per arm, typed by AgentConfig's validation."""
    arms: dict[str, dict] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, _, assigns = part.partition(":")
        arms[name] = dict(assign.partition("=")[::2] for assign in filter(None, assigns.split(",")))
    return arms


def summary(seen: dict[str, list[dict]], split: str) -> list[str]:
    """Per arm: median and total seconds, the ratio against the first arm, means of calls and tokens, and recall,
    with each later arm's paired recall difference against the first (eval.stats)."""
    first = next(iter(seen))
    base_seconds = sum(m["seconds"] for m in seen[first])
    lines = []
    for name, ms in seen.items():
        col = {k: [m[k] for m in ms] for k in ("seconds", "calls", "read", "out", "recall")}
        lines.append(f"{name:<10} median {statistics.median(col['seconds']):6.1f} s  total {sum(col['seconds']):7.1f} s"
                     f"  ratio {sum(col['seconds']) / base_seconds:.2f}  calls {statistics.mean(col['calls']):.1f}  read "
                     f"{statistics.mean(col['read']):6.0f}  out {statistics.mean(col['out']):4.0f}  recall "
                     f"{statistics.mean(col['recall']):.3f} over {len(ms)} {split} question(s)")
        if name != first:
            paired = compare_paired_means([m["recall"] for m in seen[first]], col["recall"])
            lines.append("  " + paired.sentence(first, name))
    return lines


def main() -> int:
    """Run every arm over the questions; print per-question rows and per-arm totals against the first arm."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", required=True)
    parser.add_argument("--questions", type=int, default=12)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--split", default="tune", choices=("all", "tune", "check"))
    parser.add_argument("--answer", action="store_true", help="answer too (default: retrieval only)")
    parser.add_argument("--index", default="default")
    parser.add_argument("--data", default=None, help="questions (TSV/CSV/JSONL or hf:<dataset>; default: "
                        "../shared FRAMES dev), e.g. a held-out set with --split all")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--n-docs", type=int, default=10)
    args = parser.parse_args()
    from frames_agent.eval.frames.datasets import load_questions
    from frames_agent.eval.frames.split import select
    from frames_agent.index.build import open_index

    questions = select(load_questions(args.data, None).questions, args.split)[args.offset: args.offset + args.questions]
    retriever = open_index(args.index)
    base = AgentConfig.for_model(DEFAULT_MODEL, k=args.k, n=args.n, n_docs=args.n_docs)
    pools, agents = [], {}
    for name, overrides in parse_arms(args.arms).items():
        pools.append(RuntimePool(RuntimeSettings()))
        config = AgentConfig.model_validate({**base.model_dump(), **overrides})
        agents[name] = FramesAgent(resolve_model(DEFAULT_MODEL, runtime_pool=pools[-1], cache=False), retriever,
                                   config=config)
    seen: dict[str, list[dict]] = {name: [] for name in agents}
    for question in questions:
        for name, agent in agents.items():
            m = measure(agent, question, answer=args.answer)
            seen[name].append(m)
            print(f"q{question.id:<5} {name:<10} {m['seconds']:7.1f} s  {m['calls']} calls  read {m['read']:5d}  "
                  f"out {m['out']:4d}  recall {m['recall']:.2f}", flush=True)
    for pool in pools:
        pool.close()
    print("\n".join(summary(seen, args.split)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
