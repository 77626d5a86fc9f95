"""tune on a constructed example: a scripted model that searches well only after one particular demonstration."""
from __future__ import annotations

import json

import pytest

from frames_agent.agent.api import FramesAgent
from frames_agent.agent.config import AgentConfig
from frames_agent.agent.llm.testing import ScriptedLLM, render_messages
from frames_agent.agent.nodes import PLAN_VARIABLES
from frames_agent.agent.prompts import load_prompt
from frames_agent.eval.frames.datasets import Question
from frames_agent.eval.tune.runner import Tuner, TuneSettings, candidate_sets, prompt_with_demos, split

GOLD = {
    "Who is the mayor of the city where Marta Kowalczyk was born?": ("Marta Kowalczyk", "Brennick", "Tomas Ferrante"),
    "When did the home ground of Kestrel Valley FC open?": ("Kestrel Valley FC", "Gannet Park"),
    "Which prize did the chemist from Brennick win?": ("Marta Kowalczyk", "Halvorsen Prize"),
    "On which river does Port Alder lie?": ("Port Alder", "Olse River"),
    "What does Punxsutawney Phil forecast?": ("Punxsutawney Phil", "Groundhog Day"),
    "When was the observatory above Brennick founded?": ("Brennick Observatory",),
}
QUESTIONS = [Question(id=f"t{i}", prompt=q, answer="x", gold_titles=g) for i, (q, g) in enumerate(GOLD.items())]
SETTINGS = TuneSettings(budget=6, seed=3, candidates=4, demos=1, held_out=0.5)
CONFIG = AgentConfig(k=2, n=1, n_docs=2, propose_queries=False, question_query=False)  # demos steer the queries


def _responder(helpful: str, boot: list[Question]):
    """Gold titles as queries on bootstrap questions; on held-out ones only when `helpful`'s demo is shown."""
    solved = {q.prompt for q in boot}

    def reply(messages):
        prompt = render_messages(messages)
        question = prompt.rsplit("\nQuestion: ", 1)[1].split("\n", 1)[0]
        good = question in solved or f"Question: {helpful}\n" in prompt
        return json.dumps({"thought": "", "queries": list(GOLD[question]) if good else ["nothing relevant here"]})
    return reply


def _tuner(tiny_retriever, tmp_path, responder):
    llm = ScriptedLLM(responder=responder)

    def make(path):
        return FramesAgent(llm, tiny_retriever, config=CONFIG.model_copy(update={"prompt": path}))

    return Tuner(make, tiny_retriever, SETTINGS, tmp_path / "work", progress=False), llm


def test_tune_picks_the_demo_set_with_higher_held_out_recall(tiny_retriever, tmp_path):
    boot, held = split(QUESTIONS, SETTINGS)
    assert len(boot) == 3 and len(held) == 3 and not {q.id for q in boot} & {q.id for q in held}
    helpful = boot[0].prompt
    tuner, llm = _tuner(tiny_retriever, tmp_path, _responder(helpful, boot))
    outcome = tuner.tune(QUESTIONS, {"case": 1})
    assert len(outcome.demos) == 3, "every bootstrap run found gold articles, so each is a demonstration"
    chosen = [outcome.demos[j].question for j in outcome.sets[outcome.chosen]]
    assert chosen == [helpful]
    assert outcome.scores[outcome.chosen] == 1.0 and outcome.scores[0] == 0.0
    assert f"Question: {helpful}" in outcome.text and outcome.text.count("Training example") == 1
    load_prompt(_write(tmp_path / "mine.txt", outcome.text)).check(PLAN_VARIABLES)  # a --prompt file

    # Resumable: every run is on disk, so a second tune asks the model nothing and decides the same.
    calls = len(llm.prompts)
    again, llm2 = _tuner(tiny_retriever, tmp_path, lambda m: pytest.fail("ran a question again"))
    assert again.tune(QUESTIONS, {"case": 1}).text == outcome.text and not llm2.prompts and calls > 0


def test_tune_is_deterministic_given_the_seed(tiny_retriever, tmp_path):
    boot, _ = split(QUESTIONS, SETTINGS)
    one, _ = _tuner(tiny_retriever, tmp_path / "a", _responder(boot[1].prompt, boot))
    two, _ = _tuner(tiny_retriever, tmp_path / "b", _responder(boot[1].prompt, boot))
    assert one.tune(QUESTIONS, {}).text == two.tune(QUESTIONS, {}).text
    assert split(QUESTIONS, SETTINGS) == split(QUESTIONS, TuneSettings(**{**SETTINGS.__dict__}))
    assert split(QUESTIONS, SETTINGS) != split(QUESTIONS, TuneSettings(**{**SETTINGS.__dict__, "seed": 4}))


def test_demo_text_cannot_inject_prompt_variables():
    from frames_agent.eval.tune.runner import Demo, DemoStep

    demo = Demo("q", "What is {question} in {k}?", 1.0, (DemoStep(1, "think {n}", ("a {b}",)),))
    text = prompt_with_demos(load_prompt("planning").text, [demo])
    assert load_prompt("planning").variables == set(__import__("re").findall(r"\{([A-Za-z_]\w*)\}", text))
    assert text.index("Training example 1") < text.index("Question: {question}")
    assert candidate_sets([demo] * 3, 3, 1, seed=0)[0] == ()


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)
