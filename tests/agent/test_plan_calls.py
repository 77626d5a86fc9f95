"""When the planner model is asked (plan_calls): a plan that only repeats earlier queries is replayed without a model
call until the planner's view names something new; the paper's setting asks at every step (ScriptedLLM, the real tiny
index)."""
from __future__ import annotations

import asyncio

from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.llm.testing import ScriptedLLM

QUESTION = "Who is the mayor of the city where Marta Kowalczyk was born?"
REPEAT = {"thought": "same again", "queries": ["Brennick", "Marta Kowalczyk"]}


def _all_read(**overrides) -> AgentConfig:
    # Every article of the tiny index enters at step 1 and the planner is shown all of them: later steps can bring
    # nothing new to its view.
    return AgentConfig(**{"k": 2, "n": 4, "n_docs": 20, "plan_budget": 4000, "plan_doc_tokens": 400, **overrides})


def test_a_plan_of_repeats_is_replayed_without_a_model_call(tiny_retriever):
    llm = ScriptedLLM([REPEAT, REPEAT, "Answer: Tomas Ferrante"])
    result = FramesAgent(llm, tiny_retriever, config=_all_read()).invoke(QUESTION)
    assert len(llm.prompts) == 3 and result.answer == "Tomas Ferrante"
    assert [s.plan_skipped for s in result.steps] == [False, False, True, True]
    assert [c.node for c in result.calls] == ["plan", "plan", "answer"]
    replayed = result.steps[2]
    # The replay is the model's last plan: its repeats read deeper than before, as a repeat written by the model is.
    assert replayed.origins == ["repeat", "repeat"] and replayed.new_names == []
    assert replayed.query_depths[0] > result.steps[0].query_hits[0]
    assert result.steps[1].names_shown and replayed.names_shown == []


def test_the_papers_setting_asks_at_every_step(tiny_retriever):
    llm = ScriptedLLM([REPEAT] * 4 + ["Answer: Tomas Ferrante"])
    result = FramesAgent(llm, tiny_retriever, config=_all_read(plan_calls="every_step")).invoke(QUESTION)
    assert len(llm.prompts) == 5 and not any(s.plan_skipped for s in result.steps)


def test_a_new_query_means_the_model_is_asked_again(tiny_retriever):
    new = {"thought": "the harbour", "queries": ["Port Alder"]}
    llm = ScriptedLLM([REPEAT, new, REPEAT, "Answer: Tomas Ferrante"])
    result = FramesAgent(llm, tiny_retriever, config=_all_read()).invoke(QUESTION)
    assert [s.plan_skipped for s in result.steps] == [False, False, False, True]
    assert len(llm.prompts) == 4


def test_new_names_in_the_view_mean_the_model_is_asked_again(tiny_retriever):
    # One hit a query: the repeat of step 2 reads deeper and brings articles naming what the model has not seen.
    config = AgentConfig(k=1, n=3, n_docs=1, question_query=False, propose_queries=False, repeat_docs=3)
    one = {"thought": "the city", "queries": ["Brennick"]}
    llm = ScriptedLLM([one, one, one, "Answer: Tomas Ferrante"])
    result = FramesAgent(llm, tiny_retriever, config=config).invoke(QUESTION)
    assert not result.steps[2].plan_skipped and result.steps[2].new_names
    assert len(llm.prompts) == 4


def test_a_model_that_writes_nothing_usable_is_asked_again(tiny_retriever):
    llm = ScriptedLLM(["no json here at all", REPEAT, REPEAT, REPEAT, "Answer: x"])
    result = FramesAgent(llm, tiny_retriever, config=_all_read()).invoke(QUESTION)
    assert result.steps[0].fallback and not result.steps[1].plan_skipped


def test_async_runs_skip_the_same_calls(tiny_retriever):
    llm = ScriptedLLM([REPEAT, REPEAT, "Answer: Tomas Ferrante"])
    result = asyncio.run(FramesAgent(llm, tiny_retriever, config=_all_read()).ainvoke(QUESTION))
    assert [s.plan_skipped for s in result.steps] == [False, False, True, True] and len(llm.prompts) == 3


def test_names_are_entities_by_their_words_never_bare_numbers():
    from frames_agent.agent.evidence import names

    shown = names("In 1990 the Brennick Observatory opened. Additionally, Tomas Ferrante spoke there in 1990.")
    assert shown == names("He met Tomas Ferrante.") | names("They saw the Brennick Observatory.")
    assert shown == {"ferrante toma", "brennick observatory"}  # content words, order and inflection ignored
    assert not any(key.isdigit() for key in shown)
