"""Runner throughput: questions through a fake LLM of 1 s a call at a concurrency, against the ideal time (every wave
of `concurrency` questions waits only on its own calls)."""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
import tempfile
import time
from pathlib import Path

from frames_agent.agent.api import FramesAgent
from frames_agent.agent.config import AgentConfig
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.eval.frames.autorater import Autorater
from frames_agent.eval.frames.runner import Components, FramesRunSettings, run_frames
from frames_agent.eval.frames.systems import CoverageChecker, MultiStep
from frames_agent.retrieval.types import Document

TOPICS = [f"Topic {i}" for i in range(200)]


class StubRetriever:
    """A fast in-memory retriever: every query hits a few deterministic topic articles."""

    name = "stub"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay  # seconds per batch_search: an I/O-bound (remote) retriever

    def _doc(self, i: int) -> Document:
        return Document(id=f"t{i}", title=TOPICS[i], text=f"{TOPICS[i]} is article number {i}. " * 20,
                        source="bm25:stub", article_id=f"t{i}")

    def search(self, query: str, k: int = 10) -> list[Document]:
        seed = int(hashlib.md5(query.encode()).hexdigest(), 16)
        return [self._doc((seed + j * 7) % len(TOPICS)) for j in range(k)]

    def batch_search(self, queries, k: int = 10) -> list[list[Document]]:
        if self.delay:
            time.sleep(self.delay)
        return [self.search(q, k) for q in queries]

    def doc(self, doc_id: str) -> Document | None:
        return self._doc(int(doc_id[1:])) if doc_id[1:].isdigit() else None

    def by_title(self, title: str) -> Document | None:
        match = re.fullmatch(r"topic (\d+)", title.strip().lower())
        return self._doc(int(match.group(1))) if match and int(match.group(1)) < len(TOPICS) else None


def responder(messages) -> str | dict:
    """Plans 5 queries per step, answers a wrong-ish answer (so the judge is called), judges FALSE."""
    text = str(messages[-1].content)
    if "Now grade this one." in text:
        return "Explanation: differs.\nDecision: FALSE"
    step = re.search(r"Step (\d+) of \d+", text)
    if step:
        question = re.search(r"Question: (.*)", text).group(1)
        return {"thought": "search", "queries": [f"{question[:30]} aspect {step.group(1)}-{j}" for j in range(5)]}
    return "Not sure.\nAnswer: something else"


def write_questions(path: Path, count: int) -> None:
    rows = [{"id": str(i), "Prompt": f"Question number {i} about Topic {i % 200}?", "Answer": f"gold {i}",
             "reasoning_types": "Multiple constraints",
             "wiki_links": [f"https://en.wikipedia.org/wiki/Topic_{i % 200}", "https://en.wikipedia.org/wiki/Absent"]}
            for i in range(count)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--search-delay", type=float, default=0.0,
                        help="seconds a stub batch_search blocks (shows whether retrieval threads cap concurrency)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "questions.jsonl"
        write_questions(data, args.questions)
        settings = FramesRunSettings(k=args.k, n=args.n, n_docs=10, data=str(data), out=str(Path(tmp) / "run"),
                               model="scripted", concurrency=args.concurrency, progress=False)
        config = AgentConfig(k=args.k, n=args.n, n_docs=10)
        retriever = StubRetriever(args.search_delay)

        def build(s, cfg):
            llm = ScriptedLLM(responder=responder, delay=args.delay)
            agent = FramesAgent(llm, retriever, config=cfg)
            return Components(system=MultiStep(agent), coverage=CoverageChecker(retriever),
                              rater=Autorater(llm, "scripted"))

        started = time.perf_counter()
        outcome = run_frames(settings, config, build=build, echo=lambda line: None)
        elapsed = time.perf_counter() - started

    s = outcome.summary
    calls_per_q = (s.calls + s.judge_calls) / s.n
    steps = args.n  # one blocking search per step
    ideal = (calls_per_q * args.delay + steps * args.search_delay) * math.ceil(args.questions / args.concurrency)
    print(f"questions {s.n} (failed {s.failed}), concurrency {args.concurrency}, "
          f"{calls_per_q:.1f} LLM calls/question at {args.delay:.1f} s each")
    print(f"elapsed {elapsed:.1f} s, ideal {ideal:.1f} s, ratio {elapsed / ideal:.2f} (target <= 1.25)")
    return 0 if s.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
