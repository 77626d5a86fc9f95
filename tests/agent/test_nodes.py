"""What the nodes send a chat model: capped replies and a plan schema bounded to k queries; what comes back timed;
the answer node's passage selection (ScriptedLLM, the real tiny index): a fact deep in a long article reaches the prompt."""
from __future__ import annotations

import json

from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.llm import resolve_model
from frames_agent.agent.llm.testing import ScriptedLLM
from tests.agent.llm.providers.test_openai_compat import FakeOpenAI, completion


def test_plan_and_answer_calls_are_capped_and_timed_per_node(tiny_retriever):
    fake = FakeOpenAI()
    plan = json.dumps({"thought": "find her", "queries": ["Marta Kowalczyk"]})
    fake.script += [(200, completion(plan), {}, 0), (200, completion("Answer: Brennick"), {}, 0)]
    try:
        llm = resolve_model("openai:fake", base_url=fake.url, env={"OPENAI_API_KEY": "x"})
        config = AgentConfig(k=3, n=1, n_docs=2, plan_max_tokens=200, answer_max_tokens=90)
        result = FramesAgent(llm, tiny_retriever, config=config).invoke("Where was Marta Kowalczyk born?")
    finally:
        fake.close()
    plan_request, answer_request = fake.requests
    assert plan_request["max_tokens"] == 200 and answer_request["max_tokens"] == 90
    schema = plan_request["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["queries"]["maxItems"] == 3 and schema["properties"]["thought"]["maxLength"] == 160
    # No tools: the grammar leaves out the fields nothing reads, and allows no others.
    assert set(schema["properties"]) == {"thought", "queries"} and schema["additionalProperties"] is False
    assert result.answer == "Brennick"
    assert [c.node for c in result.calls] == ["plan", "answer"] and all(c.prompt_tokens > 0 for c in result.calls)


def test_hosted_models_get_no_cap_unless_asked(tiny_retriever):
    fake = FakeOpenAI()
    fake.script += [(200, completion(json.dumps({"queries": ["Brennick"]})), {}, 0), (200, completion("Answer: x"), {}, 0)]
    try:
        llm = resolve_model("openai:fake", base_url=fake.url, env={"OPENAI_API_KEY": "x"})
        config = AgentConfig.for_model("openai:gpt-4o", k=2, n=1, n_docs=2)
        FramesAgent(llm, tiny_retriever, config=config).invoke("Where is Brennick?")
    finally:
        fake.close()
    assert all("max_tokens" not in r and "max_completion_tokens" not in r for r in fake.requests)


FACT = "The Brennick opera house was designed by the architect Ilse Marwood."
# Plausible article prose that never mentions the opera house or its architect: it pushes the fact ~6k tokens deep.
FILLER = ("The district council of Brennick meets in the town hall on the market square, where the records of the "
          "glass guild and the bridge tolls have been kept since the sixteenth century. ")


def _long_brennick(tiny_retriever):
    doc = tiny_retriever.by_title("Brennick")
    assert doc is not None
    text = doc.text + "\n" + "\n".join(FILLER * 3 for _ in range(100)) + "\n" + FACT + "\n" + FILLER * 5
    return doc.model_copy(update={"text": text})


def test_selection_shows_the_deep_passage_that_holds_the_fact(tiny_retriever):
    doc = _long_brennick(tiny_retriever)
    question = "Which architect designed the opera house of Brennick?"
    llm = ScriptedLLM(["Reasoning: the passage names her.\nAnswer: Ilse Marwood"])
    result = FramesAgent(llm, tiny_retriever, config=AgentConfig(answer_budget=600, answer_doc_tokens=400)).answer_from(
        question, [doc])
    prompt = llm.prompts[-1]
    assert FACT in prompt and result.answer == "Ilse Marwood"
    assert "Brennick is a city on the Olse River" in prompt, "the lead still says what the article is"
    shown = result.answer_context.passages
    assert [s.key for s in shown] == ["brennick"] and shown[0].of > 50 and 0 in shown[0].passages
    assert shown[0].article_tokens > 5000 and 0 < shown[0].tokens <= 600
    assert result.answer_context.budget == 600 and result.answer_context.prompt == "answer"


def test_the_lead_alone_misses_it(tiny_retriever):
    doc = _long_brennick(tiny_retriever)
    llm = ScriptedLLM(["Answer: unknown"])
    config = AgentConfig(answer_budget=600, answer_doc_tokens=400, answer_passages=0)
    result = FramesAgent(llm, tiny_retriever, config=config).answer_from("Which architect designed the opera house?", [doc])
    assert FACT not in llm.prompts[-1] and result.answer_context.passages == []


def test_step_queries_pick_passages_in_the_multistep_agent(tiny_retriever):
    # The question says nothing of the opera; the step query does, and selection follows it.
    llm = ScriptedLLM([{"thought": "t", "queries": ["Brennick opera house architect"], "tool_calls": [], "enough": False},
                       "Answer: Ilse Marwood"])
    long_doc = _long_brennick(tiny_retriever)

    class Long:
        name = "long"

        def batch_search(self, queries, k=10):
            return [[long_doc] for _ in queries]

        def search(self, query, k=10):
            return [long_doc]

        def doc(self, doc_id):
            return None

        def by_title(self, title):
            return None

    config = AgentConfig(k=1, n=1, propose_queries=False, answer_budget=600, answer_doc_tokens=400)
    FramesAgent(llm, Long(), config=config).invoke("Who designed the building where Brennick's annual concerts are held?")
    assert FACT in llm.prompts[-1]


def test_budget_room_goes_to_more_passages_when_few_articles(tiny_retriever):
    doc = _long_brennick(tiny_retriever)
    question = "Which architect designed the opera house of Brennick, and when did the first railway reach it?"
    llm = ScriptedLLM(["Answer: x", "Answer: x"])
    few = AgentConfig(answer_budget=2000, answer_doc_tokens=300, answer_passages=2)
    result = FramesAgent(llm, tiny_retriever, config=few).answer_from(question, [doc])
    roomy = len(result.answer_context.passages[0].passages)
    assert roomy > 2 + 1, "one article may use the whole budget (beyond its lead and 2 passages)"
    fixed = few.model_copy(update={"answer_budget": 300})
    result = FramesAgent(llm, tiny_retriever, config=fixed).answer_from(question, [doc])
    assert len(result.answer_context.passages[0].passages) < roomy


def test_consecutive_plan_prompts_share_their_prefix_through_the_earlier_queries(tiny_retriever):
    # The runtime re-reads a prompt only from where it differs from the last one: the question and the queries
    # asked so far come before the step's documents, so step 3 re-reads documents, not instructions or history.
    replies = [json.dumps({"thought": "t", "queries": [q]}) for q in ("Marta Kowalczyk", "Brennick", "Vellmar")]
    llm = ScriptedLLM([*replies, "Answer: x"])
    FramesAgent(llm, tiny_retriever, config=AgentConfig(k=2, n=3, n_docs=2)).invoke("Where was Marta Kowalczyk born?")
    step2, step3 = llm.prompts[1], llm.prompts[2]
    shared = step3[: next(i for i, (a, b) in enumerate(zip(step2, step3)) if a != b)]
    assert "Where was Marta Kowalczyk born?" in shared and "- Marta Kowalczyk\n" in shared
    assert "Step 2 of 3" not in shared and "Step 3 of 3" in step3


def test_tools_bring_their_field_back():
    from frames_agent.agent.queries import plan_schema, reply_extras

    assert plan_schema(4, 2)["properties"]["tool_calls"]["maxItems"] == 2
    assert '"tool_calls"' in reply_extras(True)["more_fields"] and reply_extras(False) == {
        "more_fields": "", "more_rules": ""}


def test_plan_thought_chars_zero_leaves_the_thought_out_of_the_grammar():
    from frames_agent.agent.queries import plan_schema

    assert plan_schema(5, 0, thought_chars=160)["properties"]["thought"]["maxLength"] == 160
    schema = plan_schema(5, 0, thought_chars=0)
    assert set(schema["properties"]) == {"queries"} and schema["additionalProperties"] is False


def test_context_selection_reads_a_deep_gold_passage_of_the_40th_of_60_articles(tiny_retriever):
    from frames_agent.retrieval.types import Document

    gold = _long_brennick(tiny_retriever)
    top = tiny_retriever.by_title("Kestrel Valley FC")
    top = top.model_copy(update={"text": (top.text + " ") * 40})
    filler = [Document(id=f"f{i}", title=f"Vell {i}", text=f"Vell {i} is a village. " + FILLER * 4) for i in range(58)]
    docs = [top, *filler[:38], gold, *filler[38:]]
    assert len(docs) == 60 and docs[39] is gold
    question = "Which architect designed the opera house of Brennick?"
    llm = ScriptedLLM(["Answer: Ilse Marwood"])
    result = FramesAgent(llm, tiny_retriever, config=AgentConfig()).answer_from(question, docs)
    section = llm.prompts[-1]
    assert FACT in section, "the gold passage deep inside the 40th article reaches the prompt"
    assert "Kestrel Valley FC" not in section, "the top-ranked irrelevant article takes no room"
    cut = result.answer_context
    assert cut.selection == "context" and cut.shown_titles[0] == "Brennick" and FACT in cut.text
