"""Benchmark: AgentConfig settings side by side with the embedded model, each arm on its own llama.cpp runtime,
interleaved question by question in one run (so machine load falls on every arm alike).

Arms are named override sets, e.g. "base:;lean:plan_thought_chars=0,plan_budget=200,plan_sentences=1". For each
of the questions --offset .. --offset+--questions of --split (a rule, not a pick; choose settings on `tune`, report on
`check`), every arm runs the question (retrieval only unless --answer) and the bench prints its seconds, model
calls, tokens read and generated, and gold recall; then per arm the medians and totals, the ratio of total seconds
against the first arm, and recall with its paired difference against the first arm and a 95% bootstrap interval.

    python bench/arms.py --arms "base:;thought0:plan_thought_chars=0" [--questions 12] [--split tune] [--answer]
                         [--data held-out.tsv --split all]
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frames_agent.agent import AgentConfig, FramesAgent  # noqa: E402
from frames_agent.agent.llm import DEFAULT_MODEL, resolve_model  # noqa: E402
from frames_agent.agent.llm.providers.local import RuntimePool, RuntimeSettings  # noqa: E402


def parse_arms(text: str) -> dict[str, dict]:
    """'name:key=value,key=value;name2:' -> overrides per arm, typed by AgentConfig's validation."""
    arms: dict[str, dict] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, _, assigns = part.partition(":")
        arms[name] = dict(assign.split("=", 1) for assign in filter(None, assigns.split(",")))
    return arms


def interval(diffs: list[float], rounds: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% bootstrap interval of the mean of paired differences."""
    rng = random.Random(seed)
    means = sorted(statistics.mean(rng.choices(diffs, k=len(diffs))) for _ in range(rounds))
    return means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


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
    from frames_agent.eval.frames.metrics import found_steps, recall
    from frames_agent.eval.frames.split import select
    from frames_agent.index.build import open_index

    questions = select(load_questions(args.data, None).questions, args.split)[args.offset: args.offset + args.questions]
    retriever = open_index(args.index)
    base = AgentConfig.for_model(DEFAULT_MODEL, k=args.k, n=args.n, n_docs=args.n_docs)
    pools, agents = [], {}
    for name, overrides in parse_arms(args.arms).items():
        pools.append(RuntimePool(RuntimeSettings.from_env()))
        config = AgentConfig.model_validate({**base.model_dump(), **overrides})
        agents[name] = FramesAgent(resolve_model(DEFAULT_MODEL, runtime_pool=pools[-1], cache=False), retriever,
                                   config=config)
    seen: dict[str, list[dict]] = {name: [] for name in agents}
    for question in questions:
        for name, agent in agents.items():
            result = agent.invoke(question.prompt, answer=args.answer)
            timed = [c for c in result.calls if c.prompt_seconds is not None]
            m = {"seconds": result.seconds, "calls": len(timed), "read": sum(c.read_tokens for c in timed),
                 "out": sum(c.completion_tokens for c in timed),
                 "recall": recall(found_steps(question.gold_titles, result), question.gold_titles) or 0.0}
            seen[name].append(m)
            print(f"q{question.id:<5} {name:<10} {m['seconds']:7.1f} s  {m['calls']} calls  read {m['read']:5d}  "
                  f"out {m['out']:4d}  recall {m['recall']:.2f}", flush=True)
    for pool in pools:
        pool.close()
    first = next(iter(seen))
    for name, ms in seen.items():
        col = {k: [m[k] for m in ms] for k in ("seconds", "calls", "read", "out", "recall")}
        diffs = [a["recall"] - b["recall"] for a, b in zip(ms, seen[first])]
        low, high = interval(diffs) if diffs else (0.0, 0.0)
        print(f"{name:<10} median {statistics.median(col['seconds']):6.1f} s  total "
              f"{sum(col['seconds']):7.1f} s  ratio {sum(col['seconds']) / sum(m['seconds'] for m in seen[first]):.2f}"
              f"  calls {statistics.mean(col['calls']):.1f}  read {statistics.mean(col['read']):6.0f}  out "
              f"{statistics.mean(col['out']):4.0f}  recall {statistics.mean(col['recall']):.3f} "
              f"({statistics.mean(diffs):+.3f} [{low:+.3f}, {high:+.3f}] against {first}) over {len(ms)} "
              f"{args.split} question(s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
