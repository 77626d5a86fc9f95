"""Self-ask at answer time (config sub_questions; ScriptedLLM, the real tiny index): each sub-question gets its own
passages, later ones see earlier findings, the answer prompt shows the notes, and broken replies degrade."""
from __future__ import annotations

import asyncio
import json

from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.agent.subquestions import choose, fallback_sub_questions, finding_text
from tests.agent.test_nodes import FACT, FILLER

BIRTH = "Ilse Marwood was born in the fishing village of Tarnholm in 1871."
QUESTION = "In which village was the architect of the Brennick opera house born?"


def _long_article(tiny_retriever):
    doc = tiny_retriever.by_title("Brennick")
    filler = "\n".join(FILLER * 3 for _ in range(60))
    text = "\n".join([doc.text, filler, FACT, filler, BIRTH, filler])
    return doc.model_copy(update={"text": text})


def _script() -> list[str]:
    return [json.dumps({"questions": ["Who designed the Brennick opera house?", "Where was that architect born?",
                                      QUESTION]}),
            "Answer: The architect Ilse Marwood designed it.",
            "She was born in Tarnholm.\nExtra line the notes leave out.",
            "Reasoning: the notes say Tarnholm.\nAnswer: Tarnholm"]


def _config() -> AgentConfig:
    # 360 tokens hold the lead and two passages whether tokens are counted by tiktoken or estimated without it.
    return AgentConfig(sub_questions=3, answer_budget=300, answer_doc_tokens=300, sub_answer_budget=360)


def test_each_sub_question_reads_its_own_passages_and_the_answer_sees_the_notes(tiny_retriever):
    llm = ScriptedLLM(_script())
    result = FramesAgent(llm, tiny_retriever, config=_config()).answer_from(QUESTION, [_long_article(tiny_retriever)])
    decompose, first, second, final = llm.prompts
    assert QUESTION in decompose and "at most 3" in decompose
    assert FACT in first and BIRTH not in first, "the first sub-question picks the passage on the design"
    # The second sub-question names nobody: the first finding's names ("Ilse Marwood") pick its passage.
    assert BIRTH in second and "Ilse Marwood designed it" in second
    assert "Where was that architect born? She was born in Tarnholm." in final and "Extra line" not in final
    assert result.answer == "Tarnholm"
    assert [f.question for f in result.final.findings] == ["Who designed the Brennick opera house?",
                                                           "Where was that architect born?"]
    # Sub-answers are one sentence: a small model must not spend a question's time on them.
    assert [kw.get("max_tokens") for kw in llm.call_kwargs] == [200, 80, 80, 320]


def test_async_answer_runs_the_same_calls(tiny_retriever):
    llm = ScriptedLLM(_script())
    agent = FramesAgent(llm, tiny_retriever, config=_config())
    result = asyncio.run(agent.aanswer_from(QUESTION, [_long_article(tiny_retriever)]))
    assert result.answer == "Tarnholm" and len(result.final.findings) == 2 and llm.remaining == 0


def test_unusable_decomposition_degrades_to_a_plain_answer(tiny_retriever):
    llm = ScriptedLLM(["I cannot split this.", "Answer: Tarnholm"])
    result = FramesAgent(llm, tiny_retriever, config=_config()).answer_from(QUESTION, [_long_article(tiny_retriever)])
    assert result.answer == "Tarnholm" and result.final.findings == [] and "Notes" not in llm.prompts[-1]


def test_hosted_models_get_no_cap(tiny_retriever):
    llm = ScriptedLLM(_script())
    config = AgentConfig.for_model("openai:gpt-4o", sub_questions=3)
    FramesAgent(llm, tiny_retriever, config=config).answer_from(QUESTION, [_long_article(tiny_retriever)])
    assert len(llm.prompts) == 4 and all("max_tokens" not in kw for kw in llm.call_kwargs)


def test_off_by_default_costs_no_call(tiny_retriever):
    llm = ScriptedLLM(["Answer: Tarnholm"])
    result = FramesAgent(llm, tiny_retriever).answer_from(QUESTION, [_long_article(tiny_retriever)])
    assert result.answer == "Tarnholm" and len(llm.prompts) == 1


def test_broken_json_yields_the_question_lines():
    raw = 'Sure! {"questions": ["Who designed the opera house?", "Where was he born?"\n'
    assert fallback_sub_questions(raw).questions == ["Who designed the opera house?", "Where was he born?"]
    listed = "1. Who designed the opera house?\n2) Where was he born?\nThat is all."
    assert fallback_sub_questions(listed).questions == ["Who designed the opera house?", "Where was he born?"]


def test_choose_drops_the_question_itself_repeats_and_extras():
    asked = ["Who designed it?", "who designed it", "In which village was he born?", "When?", "Why?"]
    assert choose(asked, "In which village was he born", 2) == ["Who designed it?", "When?"]


def test_finding_is_the_first_line_without_its_label():
    assert finding_text("\n**Answer:** Tarnholm, a village.\nMore") == "Tarnholm, a village."
    assert finding_text("") == ""
