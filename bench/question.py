"""Benchmark: FRAMES (k, n, n_docs) = (5, 5, 10) questions with the embedded model at today's defaults.

Questions: the first --questions of --split (a rule, not a pick; the check part for reported figures). Prints
per-question seconds, model calls, tokens read and generated, rates and recall, then per mode the median seconds.
Both modes: retrieval only, and with answers. Take figures on an idle machine; compare settings with bench/arms.py.

    python bench/question.py [--questions 10] [--split check] [--modes retrieval,answer]
                             [--data held-out.tsv --split all]   # questions of your own
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frames_agent.agent import AgentConfig, FramesAgent  # noqa: E402
from frames_agent.agent.llm import DEFAULT_MODEL, by_node, resolve_model  # noqa: E402
from frames_agent.agent.llm.providers.local import RuntimePool, RuntimeSettings  # noqa: E402


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


def main() -> int:
    """Run the defaults over the questions and modes; print the table and the medians per mode."""
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
    parser.add_argument("--new-threads", type=int, default=None, help="generation threads "
                        "(default: the idle cores when the runtime starts)")
    args = parser.parse_args()
    from frames_agent.eval.frames.datasets import load_questions
    from frames_agent.eval.frames.split import select
    from frames_agent.index.build import open_index

    questions = select(load_questions(args.data, None).questions, args.split)[args.offset: args.offset + args.questions]
    retriever = open_index(args.index)
    for mode in args.modes.split(","):
        # A fresh runtime per mode: a mode run after another would find the same plan prompts in the prompt cache,
        # which no real run does (each question is asked once).
        pool = RuntimePool(RuntimeSettings(flash_attn=args.new_flash, threads=args.new_threads))
        llm = resolve_model(DEFAULT_MODEL, runtime_pool=pool, cache=False)
        config = AgentConfig.for_model(DEFAULT_MODEL, k=args.k, n=args.n, n_docs=args.n_docs)
        agent = FramesAgent(llm, retriever, config=config)
        seen = []
        for question in questions:
            m = measure(agent, question, answer=mode == "answer")
            print(row(mode, question.id, "new", m), flush=True)
            seen.append(m)
        print(f"{mode}: threads (generation, prompt): {getattr(getattr(llm, 'runtime', None), 'threads', None)}")
        pool.close()
        print(f"{mode}: median {statistics.median(m['seconds'] for m in seen):.1f} s over {len(questions)} "
              f"{args.split} question(s); calls {statistics.mean(m['calls'] for m in seen):.1f} a question; recall "
              f"{statistics.mean(m['recall'] for m in seen):.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
