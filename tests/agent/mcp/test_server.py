"""`python cli.py mcp` as an MCP client meets it: the SDK's own stdio client lists and calls the tools, sees their
structured content, argument descriptions and annotations, progress per step and the server's version."""
from __future__ import annotations

import asyncio
import os
import sys
from importlib.metadata import version

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from frames_agent.agent.limits import MAX_QUESTION_CHARS, MAX_SEARCH_HITS
from tests.agent.llm.fake_openai import HOSTILE, FakeOpenAI
from tests.agent.serve.conftest import ROOT, write_script

pytestmark = pytest.mark.slow  # MCP server subprocesses


async def session_run(params: StdioServerParameters):
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            research = await session.call_tool("frames_research", {"question": "Who is the mayor of Brennick?", "n": 2})
            search = await session.call_tool("search_wikipedia", {"query": "Gannet Park stadium", "k": 2})
            bad = await session.call_tool("search_wikipedia", {"query": "x", "k": 0})
            return tools, research, search, bad


def test_stdio_server_lists_and_calls_both_tools(tmp_path, tiny_index):
    script = write_script(tmp_path / "script.json")
    params = StdioServerParameters(
        command=sys.executable, args=["cli.py", "mcp", "--index", str(tiny_index), "--k", "1", "--n", "1"],
        cwd=str(ROOT), env={**os.environ, "FRAMES_AGENT_TEST_SCRIPT": str(script)})
    tools, research, search, bad = asyncio.run(asyncio.wait_for(session_run(params), 120))
    by_name = {t.name: t for t in tools.tools}
    assert set(by_name) == {"frames_research", "search_wikipedia"}
    assert set(by_name["frames_research"].input_schema["properties"]) == {"question", "k", "n"}
    assert by_name["frames_research"].input_schema["required"] == ["question"]
    assert set(by_name["search_wikipedia"].input_schema["properties"]) == {"query", "k"}
    text = research.content[0].text
    assert not research.is_error and text.startswith("Tomas Ferrante\nSources:\n- ")
    hits = search.content[0].text
    assert not search.is_error and hits.startswith("## Gannet Park [gannet-park]") and hits.count("## ") == 2
    assert bad.is_error and "between 1 and 50" in bad.content[0].text


async def hostile_calls(params: StdioServerParameters, errlog):
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            huge = await session.call_tool("frames_research", {"question": "x" * 1_800_000})
            query = await session.call_tool("search_wikipedia", {"query": "x" * 5000})
            failing = await session.call_tool("frames_research", {"question": "Who is the mayor of Brennick?"})
            return huge, query, failing


def test_the_limits_of_every_entry_point_and_a_failing_model_are_tool_errors(tmp_path):
    fake = FakeOpenAI().always(*HOSTILE["empty choices"])
    params = StdioServerParameters(
        command=sys.executable, cwd=str(ROOT), env=dict(os.environ),
        args=["cli.py", "mcp", "--tools", "crag", "--k", "1", "--n", "1", "--model", "openai:x", "--base-url", fake.url])
    try:
        with open(tmp_path / "stderr.log", "w") as errlog:
            huge, query, failing = asyncio.run(asyncio.wait_for(hostile_calls(params, errlog), 120))
    finally:
        fake.close()
    assert fake.requests  # the model server was asked, and its HTTP requests are not logged to the host
    assert "HTTP Request" not in (tmp_path / "stderr.log").read_text()
    # The SDK puts "Error executing tool <name>: " before our one line.
    assert huge.is_error and huge.content[0].text.endswith(f": question: at most {MAX_QUESTION_CHARS} characters, "
                                                           "got 1,800,000")
    assert query.is_error and f": query: at most {MAX_QUESTION_CHARS} characters" in query.content[0].text
    assert failing.is_error and "no choices" in failing.content[0].text and "\n" not in failing.content[0].text


async def structured_run(params: StdioServerParameters, errlog):
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            research = await session.call_tool("frames_research", {"question": "Who is the mayor of Brennick?", "n": 2},
                                               progress_callback=on_progress)
            search = await session.call_tool("search_wikipedia", {"query": "Gannet Park stadium", "k": 2})
            return init, tools, research, search, progress


def test_structured_content_progress_descriptions_annotations_and_version(tmp_path, tiny_index):
    script = write_script(tmp_path / "script.json")
    params = StdioServerParameters(
        command=sys.executable, args=["cli.py", "mcp", "--index", str(tiny_index), "--k", "1", "--n", "1"],
        cwd=str(ROOT), env={**os.environ, "FRAMES_AGENT_TEST_SCRIPT": str(script)})
    with open(tmp_path / "stderr.log", "w") as errlog:  # the server's stderr, kept out of the test's
        init, tools, research, search, progress = asyncio.run(asyncio.wait_for(structured_run(params, errlog), 120))
    assert init.server_info.name == "frames-agent" and init.server_info.version == version("frames-agent")
    by_name = {t.name: t for t in tools.tools}
    research_tool, search_tool = by_name["frames_research"], by_name["search_wikipedia"]
    assert "per step" in research_tool.input_schema["properties"]["k"]["description"]
    assert "retrieval steps" in research_tool.input_schema["properties"]["n"]["description"]
    assert research_tool.input_schema["properties"]["question"]["description"]
    assert research_tool.annotations.read_only_hint and research_tool.annotations.open_world_hint
    assert search_tool.annotations.read_only_hint and search_tool.annotations.open_world_hint is False
    assert {"answer", "sources", "steps", "tokens"} <= set(research_tool.output_schema["properties"])
    assert set(search_tool.output_schema["properties"]) == {"hits"}
    assert "ctx" not in research_tool.input_schema["properties"]
    # The limits are the schema's own, for clients that check arguments before calling.
    fields, search_fields = research_tool.input_schema["properties"], search_tool.input_schema["properties"]
    assert fields["question"]["maxLength"] == MAX_QUESTION_CHARS and fields["question"]["minLength"] == 1
    assert (fields["k"]["minimum"], fields["k"]["maximum"], fields["n"]["minimum"], fields["n"]["maximum"]) == (1, 20, 1, 20)
    assert search_fields["query"]["maxLength"] == MAX_QUESTION_CHARS
    assert (search_fields["k"]["minimum"], search_fields["k"]["maximum"]) == (1, MAX_SEARCH_HITS)

    data = research.structured_content
    assert not research.is_error and data["answer"] == "Tomas Ferrante" and research.content[0].text.startswith(
        "Tomas Ferrante\nSources:\n- ")
    assert len(data["steps"]) == 2 and data["steps"][0]["queries"] == ["Brennick mayor", "Who is the mayor of Brennick?"]
    assert data["sources"][0]["title"] in {"Brennick", "Tomas Ferrante"} and data["tokens"]["prompt"] >= 0
    assert [p[0] for p in progress] == sorted(p[0] for p in progress) and progress[-1][:2] == (7, 7)
    assert progress[0][2] == "Step 1" and progress[1][2].startswith("searching: ")
    assert [h["id"] for h in search.structured_content["hits"]][0] == "gannet-park"


def test_input_schemas_carry_the_limits_in_process():
    from frames_agent.agent import FramesAgent
    from frames_agent.agent.llm.testing import ScriptedLLM
    from frames_agent.agent.mcp.server import build_server

    tools = {t.name: t.input_schema["properties"] for t in asyncio.run(build_server(
        FramesAgent(ScriptedLLM([]), None)).list_tools())}  # no index, no model call: runs on a core install
    assert tools["frames_research"]["question"]["maxLength"] == MAX_QUESTION_CHARS
    assert (tools["frames_research"]["n"]["minimum"], tools["frames_research"]["n"]["maximum"]) == (1, 20)
    assert (tools["search_wikipedia"]["k"]["minimum"], tools["search_wikipedia"]["k"]["maximum"]) == (1, MAX_SEARCH_HITS)
