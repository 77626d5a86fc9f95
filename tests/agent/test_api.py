"""The agent graph with ScriptedLLM and the real tiny Lucene index."""
from __future__ import annotations

import asyncio
import json
import re

import pytest
from langchain_core.tools import StructuredTool

from frames_agent.agent import AgentConfig, AgentError, FramesAgent
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.agent.prompts import PromptError
from frames_agent.core.errors import RetrievalError
from frames_agent.retrieval.tokens import count_tokens
from frames_agent.retrieval.types import Document


class Counting:
    """Wraps a retriever and records every batch of queries it receives."""

    def __init__(self, inner):
        self.inner, self.name, self.batches = inner, inner.name, []
        self.has_title = inner.has_title

    def search(self, query, k=10):
        return self.batch_search([query], k)[0]

    def batch_search(self, queries, k=10):
        self.batches.append(list(queries))
        return self.inner.batch_search(queries, k)

    def doc(self, doc_id):
        return self.inner.doc(doc_id)

    def by_title(self, title):
        return self.inner.by_title(title)


class Sizes(Counting):
    """Records each batch with its hit count: (queries, k)."""

    def batch_search(self, queries, k=10):
        self.batches.append((list(queries), k))
        return self.inner.batch_search(queries, k)


def plan(*queries, tool_calls=()):
    return {"thought": "next", "queries": list(queries), "tool_calls": list(tool_calls)}


STEPS = [
    plan("Marta Kowalczyk", "Halvorsen Prize", "chemist catalysis"),
    plan("Brennick", "Brennick mayor", "Olse River"),
    plan("Tomas Ferrante", "Port Alder", "Gannet Park"),
]


def test_exactly_k_times_n_searches(tiny_retriever):
    counting = Counting(tiny_retriever)
    llm = ScriptedLLM([*STEPS, "She was born in Brennick.\nAnswer: Tomas Ferrante"])
    paper = AgentConfig(k=3, n=3, n_docs=2, propose_queries=False, question_query=False)  # the paper's k searches
    result = FramesAgent(llm, counting, config=paper).invoke(
        "Who is the mayor of the city where Marta Kowalczyk was born?")
    assert counting.batches == [s["queries"] for s in STEPS]
    assert sum(len(b) for b in counting.batches) == 3 * 3
    assert result.answer == "Tomas Ferrante"
    assert result.llm_calls == 4 and llm.remaining == 0
    assert [s.queries for s in result.steps] == [s["queries"] for s in STEPS]
    assert result.tokens.prompt > 0 and result.tokens.completion > 0


def test_documents_never_enter_twice(tiny_retriever):
    # Step 2 repeats a query (searched again past its earlier hits) and asks others that hit documents already in
    # context.
    llm = ScriptedLLM([plan("Brennick", "Olse River"), plan("brennick", "Brennick Olse", "Port Alder Olse"), "Answer: x"])
    config = AgentConfig(k=3, n=2, n_docs=5, propose_queries=False)
    result = FramesAgent(llm, tiny_retriever, config=config).invoke("Where is Brennick?")
    ids = [d.id for d in result.documents]
    assert len(ids) == len(set(ids))
    step1, step2 = (set(s.new_doc_ids) for s in result.steps)
    assert not step1 & step2
    assert result.steps[1].dropped_queries == []  # searched again (origin 'repeat'): not also listed as dropped
    assert result.steps[1].queries == ["Brennick Olse", "Port Alder Olse", "Brennick"]
    # Past the deepest earlier ask of the same words: the question itself ("Where is Brennick?", 20 hits asked).
    assert result.steps[0].queries[-1] == "Where is Brennick?"
    assert result.steps[1].origins == ["model", "model", "repeat"] and result.steps[1].query_depths == [
        0, 0, max(result.steps[0].query_hits) + 3]


def test_passages_of_one_article_count_once(tiny_passage_index):
    from frames_agent.retrieval.lucene.searcher import BM25Retriever

    passages = BM25Retriever(tiny_passage_index, name="tinyp")
    llm = ScriptedLLM([plan("Brennick glass railway", "Brennick climate valley"), plan("Brennick opera house festival"),
                       "Answer: 1912"])
    agent = FramesAgent(llm, passages, config=AgentConfig(k=2, n=2, n_docs=3, answer_budget=5000, answer_doc_tokens=2000,
                                                            answer_passages=0))
    result = agent.invoke("When did the opera house of Brennick open?")
    brennick = [d for d in result.documents if d.article_id == "brennick"]
    assert len(brennick) >= 2, "the queries hit several passages of the Brennick article"
    answer_prompt = llm.prompts[-1]
    assert answer_prompt.count("] Brennick\n") == 1, "one article, shown once, with all its passages"
    for doc in brennick:
        assert doc.text[:40] in answer_prompt
    assert len({d.key for d in result.documents}) == len({d.article_id for d in result.documents})


def _context_section(prompt: str) -> str:
    return prompt.split("Passages:\n", 1)[1].split("\n\nQuestion:", 1)[0]


def test_answer_prompt_has_each_document_once_within_budget(tiny_retriever):
    llm = ScriptedLLM([plan("Brennick", "Port Alder", "Gannet Park", "Kestrel Valley FC"), "Answer: 1962"])
    config = AgentConfig(k=4, n=1, n_docs=4, answer_budget=120, answer_doc_tokens=50, answer_passages=0)
    result = FramesAgent(llm, tiny_retriever, config=config).invoke("When did Gannet Park open?")
    section = _context_section(llm.prompts[-1])
    assert count_tokens(section) <= 120
    titles = re.findall(r"^\[\d+\] (.+)$", section, flags=re.M)
    assert len(titles) == len(set(titles)) == result.answer_context.documents_shown
    assert result.answer_context.documents_cut == len(result.documents) - len(titles) > 0
    assert result.answer_context.tokens_cut > 0
    # Every query's best hit comes before any second-best hit.
    firsts = [tiny_retriever.search(q, 1)[0].title for q in ["Brennick", "Port Alder", "Gannet Park", "Kestrel Valley FC"]]
    assert titles[: len(set(firsts))] == list(dict.fromkeys(firsts))[: len(titles)]


def test_stream_yields_events_in_order(tiny_retriever):
    llm = ScriptedLLM([*STEPS[:2], "Answer: Brennick"])
    events = list(FramesAgent(llm, tiny_retriever, config=AgentConfig(k=3, n=2, n_docs=2)).stream("Where was Marta born?"))
    assert [e.kind for e in events] == ["step_started", "queries", "documents_added"] * 2 + ["answer"]
    assert [e.step for e in events if e.kind == "step_started"] == [1, 2]
    added = [d.id for e in events if e.kind == "documents_added" for d in e.documents]
    assert added == [d.id for d in events[-1].result.documents]
    assert events[-1].answer == "Brennick"


def test_prompt_errors(tmp_path, tiny_retriever):
    bad = tmp_path / "bad.txt"
    bad.write_text("Question: {question}\nUse {favourite_colour}.\n")
    with pytest.raises(PromptError, match="favourite_colour"):
        FramesAgent(ScriptedLLM([]), tiny_retriever, config=AgentConfig(prompt=str(bad)))
    with pytest.raises(PromptError, match="no prompt named"):
        FramesAgent(ScriptedLLM([]), tiny_retriever, config=AgentConfig(prompt="no-such-prompt"))
    good = tmp_path / "mine.txt"
    good.write_text('Q: {question} {context} {previous_queries} k={k} {step}/{n} {tools}\n{"queries": []}')
    llm = ScriptedLLM([plan("Brennick"), "Answer: a"])
    FramesAgent(llm, tiny_retriever, config=AgentConfig(prompt=str(good), k=1, n=1)).invoke("Where?")
    assert llm.prompts[0].startswith("[human]\nQ: Where?") and '{"queries": []}' in llm.prompts[0]


def test_unusable_plan_falls_back_to_question(tiny_retriever):
    llm = ScriptedLLM(["", 'Sure, here: {"queries": ["Port Alder", "Gannet Park"', "Answer: 1962"])
    config = AgentConfig(k=3, n=2, propose_queries=False)
    result = FramesAgent(llm, tiny_retriever, config=config).invoke("When did Gannet Park open?")
    first, second = result.steps
    assert first.fallback and first.queries == ["When did Gannet Park open?"] and first.errors
    assert second.queries == ["Port Alder", "Gannet Park"] and not second.fallback


def test_short_or_repeated_plans_are_topped_up_by_the_proposer(tiny_retriever):
    # Step 1 gives nothing usable, step 2 only repeats: the proposer's entities fill in, each marked as such.
    llm = ScriptedLLM(["", plan("Gannet Park"), "Answer: 1962"])
    # Repeats dropped (repeat_docs=0): the proposer takes their slots.
    config = AgentConfig(k=3, n=2, n_docs=4, question_query=False, repeat_docs=0)
    result = FramesAgent(llm, tiny_retriever, config=config).invoke(
        "When did the stadium of Kestrel Valley FC, Gannet Park, open?")
    first, second = result.steps
    assert first.fallback and first.queries == ["Kestrel Valley FC", "Gannet Park"] == first.filled_queries
    assert first.origins == ["proposer", "proposer"]
    # Step 2: every title its sentences name was read at step 1, so the proposer has none to offer.
    assert second.dropped_queries == ["Gannet Park"] and second.origins == ["fallback"]
    # The planner saw matched sentences, not each article's opening.
    assert "plays its home matches at Gannet Park" in llm.prompts[1]


def test_a_full_plan_leaves_no_room_to_the_proposer_and_off_it_proposes_nothing(tiny_retriever):
    replies = [plan("Kestrel Valley FC"), plan("football", "club", "stadium"), "Answer: x"]
    config = AgentConfig(k=3, n=2, n_docs=3, question_query=False)
    result = FramesAgent(ScriptedLLM(replies), tiny_retriever, config=config).invoke("Where does Kestrel Valley FC play?")
    assert result.steps[1].origins == ["model"] * 3
    off = AgentConfig(k=3, n=2, n_docs=3, propose_queries=False, question_query=False)
    result = FramesAgent(ScriptedLLM(replies), tiny_retriever, config=off).invoke("Where does Kestrel Valley FC play?")
    assert result.steps[1].origins == ["model"] * 3 and result.steps[0].origins == ["model"]



def test_proposer_queries_fetch_fewer_hits_each(tiny_retriever):
    counting = Sizes(tiny_retriever)
    config = AgentConfig(k=3, n=2, n_docs=1, repeat_docs=0)
    llm = ScriptedLLM(["", plan("Gannet Park"), "Answer: 1962"])
    result = FramesAgent(llm, counting, config=config).invoke("When did the stadium of Kestrel Valley FC, Gannet Park, open?")
    proposed = [q for step in result.steps for q, o in zip(step.queries, step.origins) if o == "proposer"]
    assert proposed and all(k == 3 for batch, k in counting.batches if set(batch) <= set(proposed))
    assert {q for batch, k in counting.batches if k == 3 for q in batch} == set(proposed)


def test_the_questions_own_hits_are_in_step_1_by_default(tiny_retriever):
    question = "Who is the mayor of Brennick?"
    result = FramesAgent(ScriptedLLM([plan("Marta Kowalczyk")]), tiny_retriever, config=AgentConfig(k=1, n=1)).invoke(
        question, answer=False)
    assert result.steps[0].queries == ["Marta Kowalczyk", question]
    assert result.steps[0].origins == ["model", "question"] and "brennick" in result.steps[0].new_doc_ids


def test_question_query_fetches_question_docs_hits_at_step_1_only(tiny_retriever):
    counting = Sizes(tiny_retriever)
    question = "Where was Marta Kowalczyk born?"
    config = AgentConfig(k=1, n=2, n_docs=2, question_query=True, question_docs=5, propose_queries=False)
    llm = ScriptedLLM([plan("Marta Kowalczyk"), plan("Brennick"), "Answer: Brennick"])
    result = FramesAgent(llm, counting, config=config).invoke(question)
    assert result.steps[0].origins == ["model", "question"] and result.steps[1].queries == ["Brennick"]
    assert ([question], 5) in counting.batches and (["Marta Kowalczyk"], 2) in counting.batches
    assert all(k == 2 for batch, k in counting.batches if question not in batch)


def test_long_and_too_many_queries_are_trimmed(tiny_retriever):
    long = "birth city of the mayor of Brennick in the year the observatory got its new telescope installed"
    llm = ScriptedLLM([plan(long, "Olse River", "Port Alder", "Gannet Park"), "Answer: a"])
    config = AgentConfig(k=2, n=1, question_query=False)
    result = FramesAgent(llm, tiny_retriever, config=config).invoke("q?")
    assert result.steps[0].queries == ["birth city of the mayor of Brennick in the year the observatory", "Olse River"]


def test_retrieval_error_fails_the_question(tiny_retriever):
    class Broken(Counting):
        def batch_search(self, queries, k=10):
            raise RetrievalError("index directory vanished")

    agent = FramesAgent(ScriptedLLM([plan("Brennick")]), Broken(tiny_retriever), config=AgentConfig(k=1, n=2))
    with pytest.raises(AgentError, match="retrieval failed at step 1: index directory vanished"):
        agent.invoke("Where is Brennick?")


def test_tool_results_enter_context_once_and_failures_are_recorded(tiny_retriever):
    calls = []

    def population(city: str) -> Document:
        """Population of a city."""
        calls.append(city)
        if city == "Atlantis":
            raise ValueError("no such city")
        return Document(id=f"pop:{city}", title=f"population({city})", text="212,000", source="test:population",
                        article_id=f"pop:{city}")

    tool = StructuredTool.from_function(population)
    call = {"name": "population", "args": {"city": "Brennick"}}
    llm = ScriptedLLM([plan("Brennick", tool_calls=[call, {"name": "nope", "args": {}}]),
                       plan("Olse River", tool_calls=[call, {"name": "population", "args": {"city": "Atlantis"}}]),
                       "Answer: 212,000"])
    result = FramesAgent(llm, tiny_retriever, [tool], AgentConfig(k=1, n=2)).invoke("How many live in Brennick?")
    assert calls == ["Brennick", "Brennick", "Atlantis"]
    assert [d.id for d in result.documents].count("pop:Brennick") == 1
    assert "pop:Brennick" in result.steps[0].new_doc_ids and "pop:Brennick" not in result.steps[1].new_doc_ids
    assert result.steps[0].tool_calls[0].name == "population" and len(result.steps[0].tool_calls) == 1
    assert any("population failed: no such city" in e for e in result.steps[1].errors)
    assert "population(city: string)" in llm.prompts[0]


def test_baselines_share_the_answer_prompt(tiny_retriever):
    llm = ScriptedLLM(["Answer: none", "Answer: Brennick"])
    agent = FramesAgent(llm, tiny_retriever, config=AgentConfig())
    naive = agent.answer_from("Where was Marta Kowalczyk born?", [])
    assert "(no documents)" in llm.prompts[0] and naive.llm_calls == 1 and naive.steps == []
    docs = tiny_retriever.search("Marta Kowalczyk", 2)
    bm25 = asyncio.run(agent.aanswer_from("Where was Marta Kowalczyk born?", docs))
    assert bm25.answer == "Brennick" and [d.id for d in bm25.documents] == [d.id for d in docs]
    assert "] Marta Kowalczyk\n" in llm.prompts[1]
    # Outside the graph the call is still timed as the answer node's (records and summaries add up per node).
    assert [c.node for c in naive.calls] == ["answer"] and [c.node for c in bm25.calls] == ["answer"]


def test_concurrent_ainvoke_keeps_results_apart(tiny_retriever):
    def reply(messages):
        text = messages[-1].content
        if "Answer:" in text and "Reply with one JSON" not in text:
            return "Answer: " + re.search(r"Question: (\w+)", text).group(1)
        return json.dumps(plan(re.search(r"Question: (\w+)", text).group(1)))

    agent = FramesAgent(ScriptedLLM(responder=reply, delay=0.01), tiny_retriever, config=AgentConfig(k=1, n=2))

    async def main():
        return await asyncio.gather(*(agent.ainvoke(q) for q in ["Brennick?", "Olse?", "Gannet?"]))

    results = asyncio.run(main())
    assert [r.answer for r in results] == ["Brennick", "Olse", "Gannet"]
    assert all(r.llm_calls == 3 for r in results)


def test_bad_input():
    with pytest.raises(AgentError, match="empty"):
        FramesAgent(ScriptedLLM([]), None).invoke("   ")
    with pytest.raises(ValueError):
        AgentConfig(k=0)
    with pytest.raises(ValueError):
        AgentConfig(n_docs=10_000)


def test_retrieval_only_skips_the_answer(tiny_retriever):
    llm = ScriptedLLM([plan("Brennick")])
    result = FramesAgent(llm, tiny_retriever, config=AgentConfig(k=1, n=1)).invoke("Where?", answer=False)
    assert result.answer == "" and result.llm_calls == 1 and result.documents


def test_answers_from_content_block_replies(tiny_retriever):
    from langchain_core.messages import AIMessage

    class Blocks(ScriptedLLM):
        def _next(self, messages, kwargs):
            result = super()._next(messages, kwargs)
            text = result.generations[0].message.content
            result.generations[0].message = AIMessage(content=[{"type": "text", "text": text}])
            return result

    result = FramesAgent(Blocks(["Answer: Brennick"]), tiny_retriever).answer_from("Where?", [])
    assert result.answer == "Brennick"


def test_concurrent_ainvoke_is_not_capped_by_the_default_thread_pool():
    import concurrent.futures
    import threading

    class Slow:
        """An I/O-bound retriever (a remote index, an HTTP tool): each call waits until four calls overlap."""

        name, lock, in_flight, overlapped = "slow", threading.Lock(), 0, threading.Event()

        def batch_search(self, queries, k=10):
            with self.lock:
                self.in_flight += 1
                if self.in_flight >= 4:
                    self.overlapped.set()
            self.overlapped.wait(timeout=10)
            with self.lock:
                self.in_flight -= 1
            return [[Document(id=q, title=q, text=q, article_id=q)] for q in queries]

    slow = Slow()
    llm = ScriptedLLM(responder=lambda m: json.dumps(plan("x")) if "JSON" in m[-1].content else "Answer: a")
    agent = FramesAgent(llm, slow, config=AgentConfig(k=1, n=1))

    async def main():
        asyncio.get_running_loop().set_default_executor(concurrent.futures.ThreadPoolExecutor(max_workers=1))
        await asyncio.gather(*(agent.ainvoke(f"question {i}") for i in range(12)))

    asyncio.run(main())
    assert slow.overlapped.is_set(), "retrievals of concurrent questions overlap even when the loop's own pool has 1 thread"


def test_copies_of_an_article_are_read_and_shown_once(copies_kept_index):
    from frames_agent.retrieval.lucene.searcher import BM25Retriever

    # Every copy is a document of its own in this index; the agent still reads and shows each article once.
    with BM25Retriever(copies_kept_index, name="copies") as retriever:
        llm = ScriptedLLM([plan("Olse River", "Gannet Park", "Port Alder"), plan("Olse River harbour", "Gannet Arena"),
                           "Answer: 1962"])
        result = FramesAgent(llm, retriever, config=AgentConfig(k=3, n=2, n_docs=5)).invoke(
            "When did the stadium on the Olse River open?")
    keys = [d.key for d in result.documents]
    assert len(keys) == len(set(keys)), "one document per article in the context"
    shown = result.answer_context.shown_titles
    assert len(shown) == len(set(shown)) and "Olse River" in shown
    assert result.answer_context.text.count("] Olse River\n") == 1
