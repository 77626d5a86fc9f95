"""Benchmark: named arms of AgentConfig and llama.cpp runtime settings side by side with the embedded model, each on
its own runtime, interleaved question by question (what it prints: docs/benchmarks.md)."""
from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import fields

from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.llm import DEFAULT_MODEL, resolve_model
from frames_agent.agent.llm.providers.local import RuntimePool, RuntimeSettings
from frames_agent.eval.stats import compare_paired_means

RUNTIME_FIELDS = {f.name for f in fields(RuntimeSettings)}


def parse_arms(text: str) -> dict[str, dict]:
    """'name:key=value,key=value;name2:' -> overrides per arm."""
    arms: dict[str, dict] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, _, assigns = part.partition(":")
        arms[name] = dict(assign.partition("=")[::2] for assign in filter(None, assigns.split(",")))
    return arms


def split_overrides(overrides: dict) -> tuple[dict, RuntimeSettings]:
    """An arm's overrides as (AgentConfig overrides, its runtime's settings with whole numbers typed)."""
    runtime = {k: int(v) if v.isdigit() else v for k, v in overrides.items() if k in RUNTIME_FIELDS}
    return {k: v for k, v in overrides.items() if k not in RUNTIME_FIELDS}, RuntimeSettings(**runtime)


def measure(agent: FramesAgent, question, answer: bool) -> dict:
    """One question through one arm: seconds, calls, tokens, rates, recall of gold articles."""
    from frames_agent.eval.frames.metrics import found_steps, recall

    result = agent.invoke(question.prompt, answer=answer)
    timed = [c for c in result.calls if c.prompt_seconds is not None]
    prompt_s = sum(c.prompt_seconds or 0 for c in timed)
    gen_s = sum(c.generation_seconds or 0 for c in timed)
    read = sum(c.read_tokens for c in timed)
    out = sum(c.completion_tokens for c in timed)
    return {"seconds": result.seconds, "read": read, "calls": len(timed), "prompt": result.tokens.prompt, "out": out,
            "prompt_tps": read / prompt_s if prompt_s else 0.0, "gen_tps": out / gen_s if gen_s else 0.0,
            "recall": recall(found_steps(question.gold_titles, result), question.gold_titles) or 0.0}


def summary(seen: dict[str, list[dict]], split: str) -> list[str]:
    """Per arm: seconds, ratio to the first arm, mean calls and tokens, recall and its paired difference from it."""
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
    parser.add_argument("--arms", default="defaults:")
    parser.add_argument("--questions", type=int, default=12)
    parser.add_argument("--offset", type=int, default=0, help="skip this many questions of the split first")
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
    pools, llms, agents = [], {}, {}
    for name, overrides in parse_arms(args.arms).items():
        agent_overrides, settings = split_overrides(overrides)
        pools.append(RuntimePool(settings))
        llms[name] = resolve_model(DEFAULT_MODEL, runtime_pool=pools[-1], cache=False)
        config = AgentConfig.model_validate({**base.model_dump(), **agent_overrides})
        agents[name] = FramesAgent(llms[name], retriever, config=config)
    seen: dict[str, list[dict]] = {name: [] for name in agents}
    for question in questions:
        for name, agent in agents.items():
            m = measure(agent, question, answer=args.answer)
            seen[name].append(m)
            print(f"q{question.id:<5} {name:<10} {m['seconds']:7.1f} s  {m['calls']} calls  prompt {m['prompt']:5d} (read "
                  f"{m['read']:5d})  out {m['out']:4d}  read {m['prompt_tps']:5.1f} tok/s  gen {m['gen_tps']:5.1f} "
                  f"tok/s  recall {m['recall']:.2f}", flush=True)
    for name, llm in llms.items():
        print(f"{name:<10} threads (generation, prompt) {getattr(getattr(llm, 'runtime', None), 'threads', None)}")
    for pool in pools:
        pool.close()
    print("\n".join(summary(seen, args.split)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
