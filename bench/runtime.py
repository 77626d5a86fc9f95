"""Benchmark: the embedded model's runtime settings (generation threads, flash attention, batch sizes) on the agent's own
calls, each arm on its own llama.cpp runtime, interleaved question by question in one run.

For each of the first --questions tuning questions (the split's rule, not a pick): a two-step plan (retrieval only,
k=5, n=2: the first plan and one with documents) and an answer from the question's BM25 top --n-docs. Every arm
runs the same calls greedily; the bench prints each arm's seconds, generated tokens and generation tok/s, its
ratio against the first arm, and whether its replies are identical to the first arm's (runtime settings only change
how fast the same tokens come). Take figures on an idle machine.

    python bench/runtime.py [--questions 4] [--arms "one:threads=1;two:threads=2"]

With --runtimes the arms are runtimes instead (bench/runtime_arms.py): the recorded calls of each question in
--calls (bench/runtime_arms.py record) replayed greedily on each runtime, each arm in a process of its own, one at a
time, interleaved question by question; it prints prompt and generation tok/s, seconds per question, and whether the
replies match the first arm's (the first differing word where not).

    python bench/runtime.py --runtimes "xllamacpp;ik;ik_repack=ik:repack=1;sync" --calls calls.jsonl
                            [--max-tokens 64] [--model PATH]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import fields
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.arms import parse_arms as arm_overrides  # noqa: E402
from frames_agent.agent import AgentConfig, FramesAgent  # noqa: E402
from frames_agent.agent.llm import DEFAULT_MODEL, resolve_model  # noqa: E402
from frames_agent.agent.llm.providers.local import RuntimePool, RuntimeSettings  # noqa: E402

DEFAULT_ARMS = "one:threads=1;two:threads=2"


def parse_arms(text: str) -> dict[str, RuntimeSettings]:
    """'name:key=value,key=value;name2:...' -> settings per arm (values typed by the RuntimeSettings field)."""
    types = {f.name: f.type for f in fields(RuntimeSettings)}
    arms = {}
    for name, assigns in arm_overrides(text).items():
        values: dict = {}
        for key, value in assigns.items():
            kind = str(types[key])
            values[key] = int(value) if "int" in kind and value.isdigit() else value
        arms[name] = RuntimeSettings(**values)
    return arms


def run_arm(agent: FramesAgent, question: str, docs) -> tuple[float, int, float, list[str]]:
    """(seconds, generated tokens, generation seconds, replies) of one question's plan and answer calls."""
    started = time.perf_counter()
    planned = agent.invoke(question, answer=False)
    answered = agent.answer_from(question, docs)
    seconds = time.perf_counter() - started
    calls = [*planned.calls, *answered.calls]
    out = sum(c.completion_tokens for c in calls)
    gen = sum(c.generation_seconds or 0 for c in calls)
    replies = [" | ".join(s.queries) for s in planned.steps] + [answered.raw_answer or ""]
    return seconds, out, gen, replies


def run_runtimes(arms_text: str, calls_file: Path, model: Path | None, max_tokens: int | None) -> int:
    """Each recorded question on each runtime arm (a child process per question and arm, one at a time)."""
    import json
    import subprocess
    import tempfile

    from bench.runtime_arms import CallResult, first_difference, parse_runtime_arms, question_totals, summary

    arms = parse_runtime_arms(arms_text)
    if model is None:
        from frames_agent.agent.llm import weights
        from frames_agent.core.paths import cache_dir

        model = weights.qwen_gguf(cache_dir() / "models")
    questions = [json.loads(line) for line in calls_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    per_arm: dict[str, list[dict]] = {a.name: [] for a in arms}
    diffs: dict[str, list] = {a.name: [] for a in arms}
    worker = Path(__file__).resolve().parent / "runtime_arms.py"
    for q in questions:
        calls = [{**c, "max_tokens": min(c.get("max_tokens") or 1024, max_tokens or 1 << 30)} for c in q["calls"]]
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(calls, f)
        replies: dict[str, list[str]] = {}
        for arm in arms:
            spec = f"{arm.name}={arm.runtime}:" + ",".join(f"{k}={v}" for k, v in arm.options.items())
            done = subprocess.run([sys.executable, str(worker), "replay", str(model), spec, f.name],
                                  capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(f"q{q['id']:<5} {arm.name:<12} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
                return 1
            results = [CallResult(**json.loads(line)) for line in done.stdout.splitlines() if line.startswith("{")]
            totals = question_totals(results)
            per_arm[arm.name].append(totals)
            replies[arm.name] = [r.text for r in results]
            first = replies[arms[0].name]
            for i, (a, b) in enumerate(zip(first, replies[arm.name])):
                d = first_difference(a, b)
                diffs[arm.name].append(None if d is None else (f"q{q['id']}.{i}", *d))
            print(f"q{q['id']:<5} {arm.name:<12} {totals['seconds']:6.1f} s  read {totals['read']:5.0f} at "
                  f"{totals['prompt_tps']:5.1f} tok/s  out {totals['out']:4.0f} at {totals['gen_tps']:5.1f} tok/s  "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
        Path(f.name).unlink()
    for line in summary(per_arm, diffs):
        print(line)
    return 0


def main() -> int:
    """Run every arm over the questions; print per-arm totals, ratios and whether replies match the first arm."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=4)
    parser.add_argument("--arms", default=DEFAULT_ARMS)
    parser.add_argument("--n-docs", type=int, default=10)
    parser.add_argument("--index", default="default")
    parser.add_argument("--runtimes", default=None, help="runtime arms, e.g. 'xllamacpp;ik;rp=ik:repack=1;sync'")
    parser.add_argument("--calls", type=Path, default=None, help="recorded calls (bench/runtime_arms.py record)")
    parser.add_argument("--model", type=Path, default=None, help="GGUF (default: the embedded model)")
    parser.add_argument("--max-tokens", type=int, default=None, help="cap every replayed call's generated tokens")
    args = parser.parse_args()
    if args.runtimes:
        if args.calls is None:
            parser.error("--runtimes needs --calls (record them with: python bench/runtime_arms.py record FILE)")
        return run_runtimes(args.runtimes, args.calls, args.model, args.max_tokens)
    from frames_agent.eval.frames.datasets import load_questions
    from frames_agent.eval.frames.split import select
    from frames_agent.index.build import open_index

    questions = select(load_questions(None, None).questions, "tune")[: args.questions]
    retriever = open_index(args.index)
    arms = parse_arms(args.arms)
    pools = {name: RuntimePool(settings) for name, settings in arms.items()}
    config = AgentConfig.for_model(DEFAULT_MODEL, n=2, plan_calls="every_step")
    agents = {name: FramesAgent(resolve_model(DEFAULT_MODEL, runtime_pool=pool, cache=False), retriever, config=config)
              for name, pool in pools.items()}
    totals: dict[str, list] = {name: [] for name in arms}
    replies: dict[str, list[str]] = {name: [] for name in arms}
    for question in questions:
        docs = retriever.search(question.prompt, args.n_docs)
        for name, agent in agents.items():
            seconds, out, gen, said = run_arm(agent, question.prompt, docs)
            totals[name].append((seconds, out, gen))
            replies[name] += said
            print(f"q{question.id:<5} {name:<10} {seconds:6.1f} s  out {out:4d}  gen {out / gen if gen else 0:5.1f} tok/s",
                  flush=True)
    first = next(iter(arms))
    base = sum(s for s, _, _ in totals[first])
    for name in arms:
        secs = sum(s for s, _, _ in totals[name])
        out, gen = sum(o for _, o, _ in totals[name]), sum(g for _, _, g in totals[name])
        same = sum(a == b for a, b in zip(replies[name], replies[first]))
        median = statistics.median(s for s, _, _ in totals[name])
        print(f"{name:<10} total {secs:6.1f} s (median {median:5.1f})  gen {out / gen if gen else 0:5.1f} tok/s  "
              f"ratio {secs / base:.2f} vs {first}  identical replies {same}/{len(replies[first])}  "
              f"threads {pools[name].settings.resolved_threads() if pools[name].settings else '-'}")
    for pool in pools.values():
        pool.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
