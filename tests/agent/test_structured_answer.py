"""The structured final answer: JSON {reasoning, answer} where the backend constrains replies, its twin
prompt, the "Answer:" parser as the fallback, format_ok, and the config switch that compares the two."""
from __future__ import annotations

import asyncio
import json

from frames_agent.agent.answers import AnswerReply, answer_schema, read_structured
from frames_agent.agent.api import FramesAgent
from frames_agent.agent.config import AgentConfig
from frames_agent.agent.llm.json_repair import Structured
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.retrieval.types import Document

DOCS = [Document(id="d1", title="Brennick", text="Tomas Ferrante has been mayor of Brennick since 2019.")]
QUESTION = "Who is the mayor of Brennick?"
REPLY = {"reasoning": "The passage says Tomas Ferrante has been mayor since 2019.", "answer": "Tomas Ferrante"}


def _agent(llm: ScriptedLLM, **config) -> FramesAgent:
    return FramesAgent(llm, None, config=AgentConfig(**config))


def test_a_constraining_backend_gets_the_schema_and_the_twin_prompt():
    llm = ScriptedLLM([json.dumps(REPLY)], supports_json_schema=True)
    result = _agent(llm).answer_from(QUESTION, DOCS)
    fmt = llm.call_kwargs[0]["response_format"]
    schema = fmt["json_schema"]["schema"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "AnswerReply"
    assert list(schema["properties"]) == ["reasoning", "answer"] and schema["required"] == ["reasoning", "answer"]
    assert schema["properties"]["reasoning"]["maxLength"] == 600 and schema["additionalProperties"] is False
    assert 'Reply with one JSON object and nothing else: {"reasoning"' in llm.prompts[0]
    assert "Tomas Ferrante has been mayor" in llm.prompts[0]
    assert result.answer == "Tomas Ferrante" and result.raw_answer == json.dumps(REPLY)
    final = result.final
    assert final.structured and final.format_ok and final.reasoning == REPLY["reasoning"]


def test_an_unusable_structured_reply_is_read_by_the_answer_line_parser_and_is_not_format_ok():
    llm = ScriptedLLM(["Reasoning: the passage names him.\nAnswer: Tomas Ferrante"], supports_json_schema=True)
    final = _agent(llm).answer_from(QUESTION, DOCS).final
    assert final.answer == "Tomas Ferrante" and not final.structured and not final.format_ok


def test_a_reply_cut_off_inside_the_json_keeps_its_reasoning_for_the_parser():
    cut = '{"reasoning": "The passage says so. The answer is Tomas Ferrante.", "ans'
    final = _agent(ScriptedLLM([cut], supports_json_schema=True)).answer_from(QUESTION, DOCS).final
    assert final.answer == "Tomas Ferrante" and not final.format_ok and not final.structured


def test_structured_answer_false_keeps_the_free_text_prompt_and_parser():
    llm = ScriptedLLM(["Reasoning: named.\nAnswer: Tomas Ferrante"], supports_json_schema=True)
    final = _agent(llm, structured_answer=False).answer_from(QUESTION, DOCS).final
    assert "response_format" not in llm.call_kwargs[0]
    assert 'write the final line as "Answer: <the short answer>"' in llm.prompts[0]
    assert final.answer == "Tomas Ferrante" and final.format_ok and not final.structured


def test_a_backend_that_cannot_constrain_keeps_free_text_by_default():
    llm = ScriptedLLM(["Reasoning: named.\nAnswer: Tomas Ferrante"])
    agent = _agent(llm)
    assert not agent.nodes.answer_call.structured and agent.nodes.answer_prompt.name == "answer"
    assert agent.answer_from(QUESTION, DOCS).answer == "Tomas Ferrante" and "JSON" not in llm.prompts[0]


def test_structured_answer_true_without_constraint_asks_for_json_in_the_prompt():
    llm = ScriptedLLM(["```json\n" + json.dumps(REPLY) + "\n```"])
    final = _agent(llm, structured_answer=True).answer_from(QUESTION, DOCS).final
    assert "response_format" not in llm.call_kwargs[0] and '{"reasoning": "...", "answer": "..."}' in llm.prompts[0]
    assert final.answer == "Tomas Ferrante" and final.structured and final.format_ok


def test_a_prompt_without_a_json_twin_stays_free_text():
    llm = ScriptedLLM(["Tomas Ferrante"], supports_json_schema=True)
    agent = _agent(llm, answer_prompt="answer_direct")
    assert not agent.nodes.answer_call.structured
    assert agent.answer_from(QUESTION, DOCS).answer == "Tomas Ferrante" and "response_format" not in llm.call_kwargs[0]


def test_a_users_prompt_file_finds_its_twin_beside_it(tmp_path):
    (tmp_path / "mine.txt").write_text("{context}\nQ: {question}\nAnswer:", encoding="utf-8")
    (tmp_path / "mine_json.txt").write_text("{context}\nQ: {question}\nJSON {reasoning, answer}:", encoding="utf-8")
    llm = ScriptedLLM([json.dumps(REPLY)], supports_json_schema=True)
    result = _agent(llm, answer_prompt=str(tmp_path / "mine.txt")).answer_from(QUESTION, DOCS)
    assert llm.prompts[0].endswith("JSON {reasoning, answer}:") and result.final.structured


def test_the_calculator_redoes_the_structured_answers_arithmetic():
    reply = Structured(AnswerReply(reasoning="Born 1990, died 2024.", answer="2024 - 1990 = 35"), "raw")
    final = read_structured(reply, calculator=True)
    assert final.answer == "34" and final.calculation == "2024 - 1990 = 34" and final.model_answer == "2024 - 1990 = 35"
    assert read_structured(reply, calculator=False).answer == "35"


def test_async_answer_is_the_same():
    llm = ScriptedLLM([json.dumps(REPLY)], supports_json_schema=True)
    result = asyncio.run(_agent(llm).aanswer_from(QUESTION, DOCS))
    assert result.answer == "Tomas Ferrante" and result.final.format_ok and "response_format" in llm.call_kwargs[0]


def test_schema_bounds():
    schema = answer_schema(reasoning_chars=100, answer_chars=50)
    assert schema["properties"]["answer"]["maxLength"] == 50 and schema["properties"]["reasoning"]["maxLength"] == 100
