"""Benchmark: a (k, n, n_docs) = (5, 5, 10) question through the LangGraph agent vs a plain-Python Algorithm 1 loop.
Both share an instant scripted LLM, the retriever, prompts and rendering: the ratio is the graph machinery's cost."""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time

from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.llm import parse_structured
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.agent.prompts import load_prompt
from frames_agent.agent.queries import PlanReply, fallback_plan
from frames_agent.retrieval import context as ctx

# Short entity-style queries of the kind the planning prompt asks for; 25 distinct ones = 5 steps x 5.
QUERIES = ["Alexander the Great", "Macedonia", "Aristotle", "Persian Empire", "Babylon",
           "Danube", "Vienna", "Habsburg Monarchy", "Mozart", "Salzburg",
           "Amazon River", "Brazil", "Manaus", "rubber boom", "Andes",
           "Marie Curie", "radium", "Sorbonne", "Nobel Prize in Chemistry", "Warsaw",
           "Great Barrier Reef", "coral bleaching", "Queensland", "Coral Sea", "Cairns"]


def reply(messages) -> str:
    """Instant fake model: five new queries per planning step, then a short answer."""
    text = messages[-1].content
    step = re.search(r"Step (\d+) of", text)
    if step is None:
        return "Answer: 42"
    s = int(step.group(1)) - 1
    return json.dumps({"thought": "go on", "queries": QUERIES[5 * s: 5 * s + 5], "tool_calls": [], "enough": False})


def plain_loop(llm, retriever, question: str, config: AgentConfig) -> str:
    """FRAMES Algorithm 1 written as a plain loop over the same building blocks."""
    plan_prompt, answer_prompt = load_prompt(config.prompt), load_prompt(config.answer_prompt)
    context: list[ctx.ContextEntry] = []
    issued: list[str] = []
    for step in range(1, config.n + 1):
        shown = ctx.render(context, config.plan_budget, config.plan_doc_tokens)
        text = plan_prompt.render(question=question, context=shown.text, previous_queries="\n".join(issued),
                                  k=config.k, step=step, n=config.n, tools="")
        plan = parse_structured(str(llm.invoke(text).content), PlanReply, fallback_plan).value
        queries = plan.queries[: config.k]
        hits = retriever.batch_search(queries, config.n_docs)
        ctx.merge(context, [(rank, doc) for docs in hits for rank, doc in enumerate(docs)], step)
        issued += queries
    shown = ctx.render(context, config.answer_budget, config.answer_doc_tokens)
    return str(llm.invoke(answer_prompt.render(question=question, context=shown.text)).content)


def main() -> int:
    """Run both side by side and print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default="default")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    from frames_agent.index.build import open_index

    retriever = open_index(args.index)
    config = AgentConfig(k=5, n=5, n_docs=10)
    llm = ScriptedLLM(responder=reply)
    agent = FramesAgent(llm, retriever, config=config)
    question = "Which city hosted the first event described in these articles?"
    agent.invoke(question), plain_loop(llm, retriever, question, config)  # warm up JVM, caches, tokenizer
    graph_times, loop_times = [], []
    for _ in range(args.repeats):
        t = time.perf_counter()
        result = agent.invoke(question)
        graph_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        plain_loop(llm, retriever, question, config)
        loop_times.append(time.perf_counter() - t)
    searches = sum(len(s.queries) for s in result.steps)
    g, p = statistics.median(graph_times), statistics.median(loop_times)
    print(f"index={args.index} docs_in_context={len(result.documents)} searches/question={searches} repeats={args.repeats}")
    g95 = sorted(graph_times)[int(0.95 * (len(graph_times) - 1))]
    p95 = sorted(loop_times)[int(0.95 * (len(loop_times) - 1))]
    print(f"graph (LangGraph agent)   p50 {g * 1000:8.1f} ms   p95 {g95 * 1000:8.1f} ms")
    print(f"plain Algorithm 1 loop    p50 {p * 1000:8.1f} ms   p95 {p95 * 1000:8.1f} ms")
    print(f"ratio graph/plain = {g / p:.3f}  (target <= 1.2: {'OK' if g / p <= 1.2 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
