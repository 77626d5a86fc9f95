"""What the nodes send a chat model: capped replies and a plan schema bounded to k queries; what comes back timed."""
from __future__ import annotations

import json

from agent import AgentConfig, FramesAgent
from agent.llm import resolve_model
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
    assert schema["properties"]["queries"]["maxItems"] == 3 and schema["properties"]["tool_calls"]["maxItems"] == 0
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
