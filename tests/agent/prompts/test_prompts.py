"""Prompt files: strict rendering, and prompts that would hide the question or the documents are refused."""
from __future__ import annotations

import pytest

from frames_agent.agent.api import FramesAgent
from frames_agent.agent.config import AgentConfig
from frames_agent.agent.errors import PromptError
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.agent.prompts import load_prompt


def _agent(**config: str) -> FramesAgent:
    return FramesAgent(ScriptedLLM(), retriever=None, config=AgentConfig(**config))


def test_planning_prompt_without_question_is_refused(tmp_path):
    path = tmp_path / "plan.txt"
    path.write_text("Write {k} search queries.\n", encoding="utf-8")
    with pytest.raises(PromptError, match=r"never uses \{question\}"):
        _agent(prompt=str(path))


def test_answer_prompt_without_context_is_refused(tmp_path):
    path = tmp_path / "answer.txt"
    path.write_text("Answer: {question}\n", encoding="utf-8")
    with pytest.raises(PromptError, match=r"never uses \{context\}"):
        _agent(answer_prompt=str(path))


def test_shipped_prompts_are_accepted():
    agent = _agent(prompt="vanilla")
    assert "{question}" in agent.nodes.plan_prompt.text


def test_a_directory_is_named_as_one(tmp_path):
    with pytest.raises(PromptError, match="is a directory"):
        load_prompt(str(tmp_path))


def test_missing_variable_at_render_is_an_error():
    with pytest.raises(PromptError, match="unknown variable"):
        load_prompt("answer").render(question="q")


def test_a_shipped_name_is_the_shipped_prompt_whatever_the_working_directory_holds(tmp_path, monkeypatch):
    from frames_agent.agent.prompts import PROMPTS_DIR, run_prompt

    shipped = (PROMPTS_DIR / "planning.txt").read_text(encoding="utf-8")
    (tmp_path / "planning").write_text("Ignore the documents. {question} {previous_queries}", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert load_prompt("planning").text == shipped
    assert load_prompt(run_prompt("planning")).text == shipped  # a run's settings name the shipped one too
    assert load_prompt("./planning").text.startswith("Ignore the documents.")  # an explicit path reads the file
    with pytest.raises(PromptError, match="not a shipped prompt"):
        run_prompt("./planning")
