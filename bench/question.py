"""Benchmark: FRAMES (k, n, n_docs) = (5, 5, 10) questions with the embedded model, today's defaults against the
defaults before issue 48, interleaved question by question in one run.

"old" is the configuration as landed before issue 48 (the planner asked at every step, plan_calls='every_step';
one generation thread on 2 cores; the answer reading answer_budget 1600); "new" is today's defaults (the planner
asked only when it can change what is searched, generation threads by the idle cores, today's answer budget). Each
arm runs on its own llama.cpp runtime so prompt caches do not mix. Both modes: retrieval only, and with answers.
Questions: the first --questions of --split (a rule, not a pick; the check part for reported figures). Prints
per-question seconds, model calls, tokens read and generated, rates and recall, then per mode the median seconds
of each arm and `ratio new/old = X` (issue 48's goal: <= 0.35, recall not lower). Take figures on an idle machine.

    python bench/question.py [--questions 10] [--split check] [--modes retrieval,answer]
                             [--data held-out.tsv --split all]   # questions of your own
                             [--parallel]   # also: the new arm's questions 1 at a time vs 2 at once on 2 slots
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frames_agent.agent import AgentConfig, FramesAgent  # noqa: E402
from frames_agent.agent.llm import DEFAULT_MODEL, by_node, resolve_model  # noqa: E402
from frames_agent.agent.llm.providers.local import RuntimePool, RuntimeSettings  # noqa: E402

OLD_PROMPT = Path(__file__).resolve().parent / "old_planning.txt"


# What the defaults were before issue 48 (4542a6b): every step asked the planner, generation ran on cores - 1
# threads, and the answer read 1,600 context tokens.
OLD = {"plan_calls": "every_step", "answer_budget": 1600}


def agent_for(name: str, args: argparse.Namespace, retriever, pools: list) -> FramesAgent:
    """The agent of one arm, on a runtime of its own so prompt caches do not mix."""
    from frames_agent.agent.llm.providers.local import cores

    old = name == "old"
    threads = (args.old_threads or max(1, cores() - 1)) if old else args.new_threads
    pools.append(RuntimePool(RuntimeSettings.from_env(threads=threads, batch_threads=cores() if old else None)))
    llm = resolve_model(DEFAULT_MODEL, runtime_pool=pools[-1], cache=False)
    config = AgentConfig.for_model(DEFAULT_MODEL, k=args.k, n=args.n, n_docs=args.n_docs)
    if old:
        config = config.model_copy(update=OLD)
    return FramesAgent(llm, retriever, config=config)


def measure(agent: FramesAgent, question, answer: bool) -> dict:
    """One question through one arm: seconds, tokens, per-node rates, recall of gold articles."""
    from frames_agent.eval.frames.metrics import found_steps, recall

    result = agent.invoke(question.prompt, answer=answer)
    nodes = by_node(result.calls)
    timed = [c for c in result.calls if c.prompt_seconds is not None]
    prompt_s = sum(c.prompt_seconds or 0 for c in timed)
    gen_s = sum(c.generation_seconds or 0 for c in timed)
    read = sum(c.read_tokens for c in timed)
    out = sum(c.completion_tokens for c in timed)
    answering = sum(c.seconds for c in result.calls if c.node == "answer")
    return {"seconds": result.seconds, "retrieval_seconds": result.seconds - answering, "read": read,
            "calls": len(timed), "prompt": result.tokens.prompt, "out": out,
            "prompt_tps": read / prompt_s if prompt_s else 0.0, "gen_tps": out / gen_s if gen_s else 0.0,
            "recall": recall(found_steps(question.gold_titles, result), question.gold_titles) or 0.0,
            "nodes": {k: v.model_dump() for k, v in nodes.items()}, "answer": result.answer}


def row(mode: str, qid: str, arm: str, m: dict) -> str:
    """One printed line."""
    return (f"{mode:<9} q{qid:<5} {arm:<4} {m['seconds']:7.1f} s  {m['calls']} calls  "
            f"prompt {m['prompt']:5d} (read {m['read']:5d}) "
            f"out {m['out']:5d}  read {m['prompt_tps']:5.1f} tok/s  gen {m['gen_tps']:5.1f} tok/s  "
            f"recall {m['recall']:.2f}")


async def _run_together(agent: FramesAgent, questions, at_once: int) -> float:
    """Seconds for all questions, at most at_once in flight."""
    gate = asyncio.Semaphore(at_once)

    async def one(question) -> None:
        async with gate:
            await agent.ainvoke(question.prompt, answer=False)

    started = time.perf_counter()
    await asyncio.gather(*(one(q) for q in questions))
    return time.perf_counter() - started


def parallel_check(args: argparse.Namespace, questions, retriever) -> None:
    """The new arm, retrieval only: the questions one at a time on 1 slot vs two at once on 2 slots."""
    seconds = {}
    for slots in (1, 2):
        settings = RuntimeSettings.from_env(flash_attn=args.new_flash, threads=args.new_threads, parallel=slots)
        pool = RuntimePool(settings)
        llm = resolve_model(DEFAULT_MODEL, runtime_pool=pool, cache=False)
        config = AgentConfig.for_model(DEFAULT_MODEL, k=args.k, n=args.n, n_docs=args.n_docs)
        seconds[slots] = asyncio.run(_run_together(FramesAgent(llm, retriever, config=config), questions, slots))
        pool.close()
        print(f"parallel  {slots} slot(s), {slots} question(s) at once: {seconds[slots]:7.1f} s for "
              f"{len(questions)} question(s)", flush=True)
    print(f"parallel  2 at once / 1 at a time = {seconds[2] / seconds[1]:.2f}")


def main() -> int:
    """Run both arms over the questions and modes; print the table, the medians and the ratio per mode."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--split", default="check", choices=("all", "tune", "check"))
    parser.add_argument("--offset", type=int, default=0, help="skip this many questions of the split first")
    parser.add_argument("--modes", default="retrieval,answer")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--n-docs", type=int, default=10)
    parser.add_argument("--index", default="default")
    parser.add_argument("--data", default=None, help="questions (TSV/CSV/JSONL or hf:<dataset>; default: "
                        "../shared FRAMES dev), e.g. a held-out set with --split all")
    parser.add_argument("--new-flash", default=RuntimeSettings().flash_attn, choices=("auto", "on", "off"))
    parser.add_argument("--old-threads", type=int, default=None, help="generation threads of the old arm "
                        "(default: cores - 1, as before issue 48)")
    parser.add_argument("--new-threads", type=int, default=None, help="generation threads of the new arm "
                        "(default: the idle cores when its runtime starts)")
    parser.add_argument("--parallel", action="store_true", help="also time 1 vs 2 questions at once (new arm)")
    args = parser.parse_args()
    from frames_agent.eval.frames.datasets import load_questions
    from frames_agent.eval.frames.split import select
    from frames_agent.index.build import open_index

    questions = select(load_questions(args.data, None).questions, args.split)[args.offset: args.offset + args.questions]
    retriever = open_index(args.index)
    modes = args.modes.split(",")
    for mode in modes:
        # Fresh runtimes per mode: a mode run after another would find the same plan prompts in the prompt cache,
        # which no real run does (each question is asked once).
        pools: list = []
        arms = {name: agent_for(name, args, retriever, pools) for name in ("old", "new")}
        seen: dict[str, list[dict]] = {name: [] for name in arms}
        for question in questions:
            for name, agent in arms.items():
                m = measure(agent, question, answer=mode == "answer")
                print(row(mode, question.id, name, m), flush=True)
                seen[name].append(m)
        for name, agent in arms.items():
            runtime = getattr(agent.llm, "runtime", None)
            print(f"{mode}: {name} arm's threads (generation, prompt): {getattr(runtime, 'threads', None)}")
        for pool in pools:
            pool.close()
        old, new = ({k: [m[k] for m in seen[a]] for k in ("seconds", "retrieval_seconds", "recall", "calls")}
                    for a in ("old", "new"))
        if mode == "answer":  # the same run's retrieval part: each question's time before its answer call
            print(f"{mode}: retrieval part median old {statistics.median(old['retrieval_seconds']):.1f} s, new "
                  f"{statistics.median(new['retrieval_seconds']):.1f} s")
        print(f"{mode}: median old {statistics.median(old['seconds']):.1f} s, new {statistics.median(new['seconds']):.1f}"
              f" s over {len(questions)} {args.split} question(s); calls old {statistics.mean(old['calls']):.1f}, new "
              f"{statistics.mean(new['calls']):.1f} a question; recall old {statistics.mean(old['recall']):.3f}, new "
              f"{statistics.mean(new['recall']):.3f}")
        print(f"{mode}: ratio new/old = {sum(new['seconds']) / sum(old['seconds']):.2f} (total seconds; goal <= 0.35)",
              flush=True)
    if args.parallel:
        parallel_check(args, questions, retriever)
    return 0


if __name__ == "__main__":
    sys.exit(main())
