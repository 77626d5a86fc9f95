"""Graph state: typing_extensions TypedDicts, reducers for the fields that accumulate, input and output schemas."""
from __future__ import annotations

import operator

from typing_extensions import get_type_hints, is_typeddict

from frames_agent.agent import AgentConfig
from frames_agent.agent.graph import build_graph
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.agent.state import (
    AgentInput,
    AgentOutput,
    AgentState,
    DocumentsAdded,
    QueriesPlanned,
    StepRecord,
    StepStarted,
    ToolCall,
    progress_line,
    upsert_context,
    upsert_steps,
)
from frames_agent.retrieval.context import ContextEntry
from frames_agent.retrieval.types import Document


def plan(*queries):
    return {"thought": "next", "queries": list(queries), "tool_calls": [], "enough": False}


def graph(tiny_retriever, replies, n=2):
    config = AgentConfig(k=2, n=n, n_docs=2, propose_queries=False, question_query=False)
    return build_graph(ScriptedLLM(replies), tiny_retriever, config=config)


def test_schemas_are_typing_extensions_typeddicts_with_correct_annotations():
    assert all(is_typeddict(schema) for schema in (AgentInput, AgentOutput, AgentState))
    hints = get_type_hints(AgentState, include_extras=True)
    assert hints["retrieved"] == list[tuple[int, Document]]
    assert hints["queries"].__metadata__ == (operator.add,)
    assert hints["steps"].__metadata__ == (upsert_steps,) and hints["context"].__metadata__ == (upsert_context,)


def test_input_and_output_json_schemas(tiny_retriever):
    compiled = graph(tiny_retriever, [])
    given = compiled.get_input_jsonschema()
    assert set(given["properties"]) == {"question", "variables", "skip_answer"} and given["required"] == ["question"]
    returned = compiled.get_output_jsonschema()
    assert set(returned["properties"]) == {"question", "answer", "raw_answer", "steps", "context",
                                           "answer_context", "final", "messages"}
    assert "pending_queries" not in returned["properties"] and "retrieved" not in returned["properties"]


def test_upsert_reducers_replace_in_place_and_append():
    one, two = StepRecord(step=1, queries=["a"]), StepRecord(step=2)
    assert upsert_steps([one, two], [one.model_copy(update={"new_doc_ids": ["x"]})]) == [
        one.model_copy(update={"new_doc_ids": ["x"]}), two]
    assert upsert_steps(None, [one]) == [one] and upsert_steps([one], [two]) == [one, two]
    entry = ContextEntry(key="k", step=1, rank=0)
    assert upsert_context([entry], [ContextEntry(key="k", step=1, rank=3)])[0].rank == 3


SCRIPT = [plan("Brennick", "Olse River"), plan("Port Alder", "Gannet Park"), "Answer: 1962"]


def test_nodes_return_only_what_they_add_and_reducers_accumulate(tiny_retriever):
    compiled = graph(tiny_retriever, SCRIPT)
    updates = list(compiled.stream({"question": "When did the stadium open?"}, stream_mode="updates"))
    plans = [update["plan"] for update in updates if "plan" in update]
    assert [p["queries"] for p in plans] == [["Brennick", "Olse River"], ["Port Alder", "Gannet Park"]]  # deltas
    assert all(len(p["steps"]) == 1 for p in plans)
    merges = [update["merge"] for update in updates if "merge" in update]
    assert [m["steps"][0].step for m in merges] == [1, 2] and merges[1]["retrieved"] == []
    values = list(graph(tiny_retriever, SCRIPT).stream({"question": "When did the stadium open?"}, stream_mode="values"))
    assert values[-1]["answer"] == "1962" and [s.step for s in values[-1]["steps"]] == [1, 2]
    assert len(values[-1]["steps"][1].new_doc_ids) >= 1
    final = graph(tiny_retriever, SCRIPT).invoke({"question": "When did the stadium open?"})
    assert set(final) <= set(get_type_hints(AgentOutput)) and final["answer"] == "1962"
    assert "queries" not in final and "retrieved" not in final


def test_events_as_progress_lines_name_the_fallback_and_tool_calls():
    assert progress_line(StepStarted(step=2)) == "Step 2\n"
    planned = QueriesPlanned(step=2, queries=["Olse River"], tool_calls=[ToolCall(name="finance", args={"x": 1})],
                             fallback=True)
    assert progress_line(planned) == '  searching: Olse River | finance({"x": 1})  (fallback)\n'
    added = DocumentsAdded(step=2, documents=[Document(id="a", title="Olse"), Document(id="b", title="Olse")])
    assert progress_line(added) == "  +2 new: Olse\n"
