"""The plan step's sources end to end: a scripted run over the real tiny index gives the same prompts (by hash) and
the same queries, origins, depths and new articles at every step as the code did before the plan step was split
into its sources (expectations recorded then, as literals)."""
from __future__ import annotations

import hashlib
import re

import pytest

from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.llm.testing import ScriptedLLM

QUESTION = "In which year did the stadium of the football club from the birthplace of Brennick's mayor open?"
# Repeats, a fallback, a new name and an over-long plan: every source of a step's queries is used.
PLANS = {
    1: {"thought": "The mayor first.", "queries": ["Brennick mayor", "Brennick", "football stadium"]},
    2: {"thought": "Same again.", "queries": ["Brennick", "mayor of Brennick"]},
    3: "{not json",
    4: {"thought": "The harbour town.", "queries": ["Port Alder", "Kestrel Valley FC", "Brennick",
                                                    "Port Alder football"]},
    5: {"thought": "Same again.", "queries": ["Port Alder", "Kestrel Valley FC"]},
    6: {"thought": "Same again.", "queries": ["Port Alder", "Kestrel Valley FC"]},
    7: {"thought": "Same again.", "queries": ["Port Alder", "Kestrel Valley FC"]},
}


def _respond(messages) -> object:
    step = re.search(r"Your JSON reply for step (\d+)", str(messages[-1].content))
    return PLANS[int(step.group(1))] if step else "Answer: 1962"


def _run(retriever, **overrides) -> dict:
    llm = ScriptedLLM(responder=_respond)
    # One hit a query and two for the question: the context grows a few articles a step.
    config = AgentConfig(**{"n": 7, "n_docs": 1, "question_docs": 2, **overrides})
    result = FramesAgent(llm, retriever, config=config).invoke(QUESTION)
    return {"prompts": [hashlib.sha256(p.encode()).hexdigest()[:16] for p in llm.prompts],
            "steps": [(s.queries, s.origins, s.query_depths, s.new_doc_ids) for s in result.steps]}


EXPECTED: dict[str, dict] = {
    "defaults": {
        "prompts": [
            "a3d0834fe9bd2e89", "e02e52fb961f7ebb", "e095b6ecf4b573d1", "5244c7e4ab723d31",
            "b545663bf7ff2450", "5666197151947d5c",
        ],
        "steps": [
            (['Brennick mayor', 'Brennick', 'football stadium', QUESTION],
             ['model', 'model', 'model', 'question'], [],
             ['brennick', 'gannet-park']),
            (['Brennick', 'Brennick mayor', 'Tomas Ferrante', 'Port Alder'],
             ['repeat', 'repeat', 'proposer', 'proposer'], [4, 4, 0, 0],
             ['observatory', 'olse', 'ferrante', 'port-alder']),
            (['Kestrel Valley FC'],
             ['proposer'], [],
             ['kestrel-valley']),
            (['Port Alder football', 'Port Alder', 'Kestrel Valley FC', 'Brennick'],
             ['model', 'repeat', 'repeat', 'repeat'], [0, 6, 6, 7],
             ['kowalczyk']),
            (['Port Alder', 'Kestrel Valley FC'],
             ['repeat', 'repeat'], [9, 6],
             []),
            (['Port Alder', 'Kestrel Valley FC'],
             ['repeat', 'repeat'], [9, 6],
             []),
            (['Port Alder', 'Kestrel Valley FC'],
             ['repeat', 'repeat'], [9, 6],
             []),
        ],
    },
    "every_step": {
        "prompts": [
            "a3d0834fe9bd2e89", "e02e52fb961f7ebb", "e095b6ecf4b573d1", "5244c7e4ab723d31",
            "b545663bf7ff2450", "230e0041e7df3ba1", "5f26ca2f434da0bf", "5666197151947d5c",
        ],
        "steps": [
            (['Brennick mayor', 'Brennick', 'football stadium', QUESTION],
             ['model', 'model', 'model', 'question'], [],
             ['brennick', 'gannet-park']),
            (['Brennick', 'Brennick mayor', 'Tomas Ferrante', 'Port Alder'],
             ['repeat', 'repeat', 'proposer', 'proposer'], [4, 4, 0, 0],
             ['observatory', 'olse', 'ferrante', 'port-alder']),
            (['Kestrel Valley FC'],
             ['proposer'], [],
             ['kestrel-valley']),
            (['Port Alder football', 'Port Alder', 'Kestrel Valley FC', 'Brennick'],
             ['model', 'repeat', 'repeat', 'repeat'], [0, 6, 6, 7],
             ['kowalczyk']),
            (['Port Alder', 'Kestrel Valley FC'],
             ['repeat', 'repeat'], [9, 6],
             []),
            (['Port Alder', 'Kestrel Valley FC'],
             ['repeat', 'repeat'], [9, 6],
             []),
            (['Port Alder', 'Kestrel Valley FC'],
             ['repeat', 'repeat'], [9, 6],
             []),
        ],
    },
    "no_question_query": {
        "prompts": [
            "a3d0834fe9bd2e89", "d33c38e467339d6e", "9c62f476517edef6", "6435a64e8636e1df",
            "52b80940990c9cd2", "5666197151947d5c",
        ],
        "steps": [
            (['Brennick mayor', 'Brennick', 'football stadium'],
             ['model', 'model', 'model'], [],
             ['brennick', 'gannet-park']),
            (['Brennick', 'Brennick mayor', 'Tomas Ferrante', 'Port Alder'],
             ['repeat', 'repeat', 'proposer', 'proposer'], [4, 4, 0, 0],
             ['observatory', 'olse', 'ferrante', 'port-alder']),
            (['Kestrel Valley FC'],
             ['proposer'], [],
             ['kestrel-valley']),
            (['Port Alder football', 'Port Alder', 'Kestrel Valley FC', 'Brennick'],
             ['model', 'repeat', 'repeat', 'repeat'], [0, 6, 6, 7],
             ['kowalczyk']),
            (['Port Alder', 'Kestrel Valley FC'],
             ['repeat', 'repeat'], [9, 6],
             []),
            (['Port Alder', 'Kestrel Valley FC'],
             ['repeat', 'repeat'], [9, 6],
             []),
            (['Port Alder', 'Kestrel Valley FC'],
             ['repeat', 'repeat'], [9, 6],
             []),
        ],
    },
    "no_proposer": {
        "prompts": [
            "a3d0834fe9bd2e89", "e02e52fb961f7ebb", "264d7c8abbee4f6c", "e3677bf26e5e0716",
            "b386b1126c24dd2b", "518a452067806580", "5da4a0724f146efe", "330e859f7776e31a",
        ],
        "steps": [
            (['Brennick mayor', 'Brennick', 'football stadium', QUESTION],
             ['model', 'model', 'model', 'question'], [],
             ['brennick', 'gannet-park']),
            ([QUESTION],
             ['fallback'], [],
             ['kestrel-valley', 'port-alder']),
            ([QUESTION],
             ['fallback'], [],
             ['phil']),
            (['Port Alder', 'Kestrel Valley FC', 'Port Alder football'],
             ['model', 'model', 'model'], [],
             []),
            ([QUESTION],
             ['fallback'], [],
             ['ferrante', 'observatory']),
            ([QUESTION],
             ['fallback'], [],
             ['halvorsen-prize']),
            ([QUESTION],
             ['fallback'], [],
             ['olse']),
        ],
    },
}


@pytest.mark.parametrize("name, overrides", [("defaults", {}), ("every_step", {"plan_calls": "every_step"}),
                                             ("no_question_query", {"question_query": False}),
                                             ("no_proposer", {"propose_queries": False, "repeat_docs": 0})])
def test_a_scripted_run_searches_and_prompts_as_recorded(tiny_retriever, name, overrides):
    assert _run(tiny_retriever, **overrides) == EXPECTED[name]
