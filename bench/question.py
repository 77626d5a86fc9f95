"""Benchmark: FRAMES (k, n, n_docs) = (5, 5, 10) questions with the embedded model, old vs new configuration.

The same fixed dev questions (the first --questions rows of the dev split: a rule, not a pick) run through the
multi-step agent twice per question, interleaved, each configuration on its own llama.cpp runtime: "old" is the
configuration before the speed work (flash attention auto = on, no reply caps, plan schema without maxItems or
field pruning, the planning prompt of bench/old_planning.txt with its documents before the earlier queries, long
thoughts); "new" is today's defaults. Both modes: retrieval only, and with answers. Prints per-question seconds, tokens read
and generated, prompt and generation tok/s, and as its last line `ratio new/old = X` (goal <= 0.5) with the recall
of both (the new one must not be lower). Take figures on an idle machine.

    python bench/question.py [--questions 3] [--modes retrieval,answer] [--old-flash auto] [--new-flash off]
                             [--parallel]   # also: the new arm's questions 1 at a time vs 2 at once on 2 slots
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frames_agent.agent import AgentConfig, FramesAgent  # noqa: E402
from frames_agent.agent.llm import DEFAULT_MODEL, by_node, resolve_model  # noqa: E402
from frames_agent.agent.llm.providers.local import RuntimePool, RuntimeSettings  # noqa: E402

OLD_PROMPT = Path(__file__).resolve().parent / "old_planning.txt"


def agent_for(name: str, args: argparse.Namespace, retriever, pools: list) -> FramesAgent:
    """The agent of one arm, on a runtime of its own so prompt caches do not mix."""
    old = name == "old"
    settings = RuntimeSettings.from_env(flash_attn=args.old_flash if old else args.new_flash,
                                        threads=args.old_threads if old else args.new_threads)
    pools.append(RuntimePool(settings))
    llm = resolve_model(DEFAULT_MODEL, runtime_pool=pools[-1], cache=False)
    config = AgentConfig.for_model(DEFAULT_MODEL, k=args.k, n=args.n, n_docs=args.n_docs)
    if old:  # before the speed work: no caps, the old prompt layout, and the plan schema without maxItems
        config = config.model_copy(update={"plan_max_tokens": None, "answer_max_tokens": None,
                                           "prompt": str(OLD_PROMPT), "plan_thought_chars": 300,
                                           "plan_budget": 700})
    agent = FramesAgent(llm, retriever, config=config)
    if old:
        agent.nodes.plan_schema = None
    return agent


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
    return {"seconds": result.seconds, "read": read, "prompt": result.tokens.prompt, "out": out,
            "prompt_tps": read / prompt_s if prompt_s else 0.0, "gen_tps": out / gen_s if gen_s else 0.0,
            "recall": recall(found_steps(question.gold_titles, result), question.gold_titles) or 0.0,
            "nodes": {k: v.model_dump() for k, v in nodes.items()}, "answer": result.answer}


def row(mode: str, qid: str, arm: str, m: dict) -> str:
    """One printed line."""
    return (f"{mode:<9} q{qid:<5} {arm:<4} {m['seconds']:7.1f} s  prompt {m['prompt']:5d} (read {m['read']:5d}) "
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
    """Run both arms over the questions and modes; print the table and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--modes", default="retrieval,answer")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--n-docs", type=int, default=10)
    parser.add_argument("--index", default="default")
    parser.add_argument("--old-flash", default="auto", choices=("auto", "on", "off"))
    parser.add_argument("--new-flash", default=RuntimeSettings().flash_attn, choices=("auto", "on", "off"))
    parser.add_argument("--old-threads", type=int, default=None, help="generation threads of the old arm")
    parser.add_argument("--new-threads", type=int, default=None, help="generation threads of the new arm")
    parser.add_argument("--parallel", action="store_true", help="also time 1 vs 2 questions at once (new arm)")
    args = parser.parse_args()
    from frames_agent.eval.frames.datasets import load_questions
    from frames_agent.index.build import open_index

    questions = load_questions(None, args.questions).questions
    retriever = open_index(args.index)
    totals = {name: {"seconds": 0.0, "recall": 0.0} for name in ("old", "new")}
    for mode in args.modes.split(","):
        # Fresh runtimes per mode: a mode run after another would find the same plan prompts in the prompt cache,
        # which no real run does (each question is asked once).
        pools: list = []
        arms = {name: agent_for(name, args, retriever, pools) for name in ("old", "new")}
        for question in questions:
            for name, agent in arms.items():
                m = measure(agent, question, answer=mode == "answer")
                print(row(mode, question.id, name, m), flush=True)
                totals[name]["seconds"] += m["seconds"]
                totals[name]["recall"] += m["recall"] / len(questions) / len(args.modes.split(","))
        for pool in pools:
            pool.close()
    if args.parallel:
        parallel_check(args, questions, retriever)
    old, new = totals["old"], totals["new"]
    print(f"total old {old['seconds']:.0f} s, new {new['seconds']:.0f} s over {len(questions)} question(s) x "
          f"{args.modes}")
    print(f"ratio new/old = {new['seconds'] / old['seconds']:.2f}  (goal <= 0.5; recall old {old['recall']:.2f}, "
          f"new {new['recall']:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
