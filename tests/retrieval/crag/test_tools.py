"""CRAG KG tools: typed schemas, compact Documents, dedup ids, errors, and the agent calling them."""
from __future__ import annotations

import json

import pytest
from langchain_core.tools import ToolException

from frames_agent.agent import AgentConfig, FramesAgent
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.retrieval.crag import CRAGClient, CRAGError, build_tools
from frames_agent.retrieval.crag.endpoints import BY_NAME
from frames_agent.retrieval.crag.render import compact, number, render
from frames_agent.retrieval.crag.server import free_port, load_recorded
from frames_agent.retrieval.crag.tools import CRAGToolError, call_id, crag_tools, result_document
from tests.shared_data import RECORDINGS, needs_crag

RECORDED = load_recorded(RECORDINGS) if RECORDINGS.is_file() else []


@pytest.fixture(scope="module")
def client(crag_server):
    with CRAGClient(crag_server, retries=0) as c:
        yield c


def _args(ep, body):
    return {p.name: (body or {}).get(p.key) for p in ep.params}


@needs_crag
def test_every_recorded_reply_renders_compactly_with_a_stable_id():
    for ep, body, reply in RECORDED:
        doc = result_document(ep, _args(ep, body), reply)
        assert 0 < len(doc.text) <= 1500, ep.name
        assert doc.source == f"crag:{ep.name}" and doc.article_id == doc.id and doc.id.startswith(f"crag:{ep.name}:")
        assert doc.title.startswith(f"{ep.name}(")


@needs_crag
def test_huge_results_are_summarised():
    by_name = {ep.name: (ep, body, reply) for ep, body, reply in RECORDED}
    ep, body, reply = by_name["finance_get_price_history"]
    text = render(ep.name, reply["result"])
    assert text.startswith("252 daily bars 2023-02-28..2024-02-28") and "2024-02-28: " in text
    ep, body, reply = by_name["sports_nba_get_play_by_play_data_by_game_ids"]
    text = render(ep.name, reply["result"])
    assert text.startswith("481 rows:") and "Start of 1st Period" in text and "End of 4th Period" in text
    assert "rows not shown" in text
    ep, body, reply = by_name["finance_get_detailed_price_history"]
    assert "2024-02-23: open 488.05 high 494.36" in render(ep.name, reply["result"])


def test_no_match_results_say_so():
    assert render("open_get_entity", None) == "no result (null)"
    assert render("music_get_lifespan", [None, None]) == "no match [null, null]"
    assert render("music_get_billboard_rank_date", [[], []]) == "no match [[], []]"
    assert render("music_grammy_get_award_count_by_song", 0) == "0"


def test_compact_rendering_rules():
    assert number(22.95) == "22.95" and number(127.0) == "127" and number(0.004123) == "0.004123"
    assert compact({"b": 1, "a": None, "c": [1] * 12}) == "b: 1; c: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, … (+2 more)]"


def test_equal_calls_get_equal_ids_and_different_calls_do_not():
    ep = BY_NAME["movie_get_movie_info_by_id"]
    assert call_id(ep, ep.body({"movie_id": 100})) == call_id(ep, ep.body({"movie_id": 100}))
    assert call_id(ep, ep.body({"movie_id": 100})) != call_id(ep, ep.body({"movie_id": 101}))


def test_tools_have_typed_args_and_short_descriptions(client):
    tools = {t.name: t for t in crag_tools(client)}
    assert len(tools) == 38
    assert tools["movie_get_movie_info_by_id"].args["movie_id"]["type"] == "integer"
    assert tools["music_get_billboard_attributes"].args["attribute"]["enum"] == ["rank_last_week", "weeks_in_chart",
                                                                                 "top_position", "rank"]
    assert "team_name" in tools["sports_nba_get_games_on_date"].args
    assert all(len(t.description) < 120 and t.tags[0] == "crag" for t in tools.values())


def test_tools_by_domain_and_by_name(client):
    assert {t.metadata["domain"] for t in crag_tools(client, ["finance", "music"])} == {"finance", "music"}
    assert [t.name for t in crag_tools(client, ["finance_get_eps"])] == ["finance_get_eps"]
    assert len(crag_tools(client, ["sports"])) == 3 and crag_tools(client, None) == []


def test_build_tools_from_a_cli_spec(client):
    use_wiki, tools = build_tools("wiki,crag:movie", client)
    assert use_wiki and {t.metadata["domain"] for t in tools} == {"movie"}
    assert build_tools("wiki") == (True, [])


def test_tool_gives_the_model_text_and_the_agent_a_document(client):
    tool = {t.name: t for t in crag_tools(client, ["finance"])}["finance_get_eps"]
    assert tool.invoke({"ticker_name": "META"}) == "22.95"  # used directly: text, not a pydantic repr
    message = tool.invoke({"type": "tool_call", "name": tool.name, "args": {"ticker_name": "META"}, "id": "c1"})
    doc = message.artifact
    assert message.content == "22.95"
    assert (doc.text, doc.title, doc.source) == ("22.95", 'finance_get_eps(ticker_name="META")', "crag:finance_get_eps")


def test_tool_errors_are_tool_exceptions_with_one_line(client):
    tool = {t.name: t for t in crag_tools(client, ["movie"])}["movie_get_year_info"]
    with pytest.raises(CRAGToolError) as err:
        tool.invoke({"year": "1900"})
    assert isinstance(err.value, ToolException) and isinstance(err.value, CRAGError)
    assert "HTTP 500" in str(err.value) and "\n" not in str(err.value)


def test_tool_on_a_dead_server_fails_clearly():
    tool = crag_tools(CRAGClient(f"http://127.0.0.1:{free_port()}", retries=0), ["finance_get_eps"])[0]
    with pytest.raises(CRAGToolError, match="connection refused"):
        tool.invoke({"ticker_name": "META"})


def _plan(*calls, queries=()):
    return json.dumps({"thought": "look it up", "queries": list(queries),
                       "tool_calls": [{"name": n, "args": a} for n, a in calls], "enough": False})


def test_agent_calls_a_kg_tool_and_the_result_enters_the_context_once(client):
    eps = ("finance_get_eps", {"ticker_name": "META"})
    llm = ScriptedLLM([_plan(eps), _plan(eps, ("movie_get_year_info", {"year": "1900"})), "Answer: 22.95"])
    agent = FramesAgent(llm, None, crag_tools(client, ["finance", "movie"]), AgentConfig(k=1, n=2))
    result = agent.invoke("What is Meta's EPS?")
    crag_docs = [d for d in result.documents if d.source == "crag:finance_get_eps"]
    assert len(crag_docs) == 1 and crag_docs[0].text == "22.95"
    assert result.steps[0].new_doc_ids == [crag_docs[0].id] and crag_docs[0].id not in result.steps[1].new_doc_ids
    assert any("movie_get_year_info failed" in e and "HTTP 500" in e for e in result.steps[1].errors)
    answer_prompt = llm.prompts[-1]
    assert answer_prompt.count('finance_get_eps(ticker_name="META")') == 1 and "22.95" in answer_prompt
    assert "finance_get_eps(ticker_name: string)" in llm.prompts[0]
    assert result.answer == "22.95"
