"""CRAG runner: pages to chunks, row reading under bad input, answering, scoring, resuming, task 2 tools, CLI."""
from __future__ import annotations

import bz2
import json

import pytest

from frames_agent import cli
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.core.errors import FramesAgentError
from frames_agent.core.paths import shared_dir
from frames_agent.eval.crag.commands import crag_tools_for
from frames_agent.eval.crag.commands import default_rows as default_data
from frames_agent.eval.crag.rows import (
    CHUNK_WORDS,
    MAX_CHUNKS_PER_PAGE,
    ChunkRetriever,
    CragRow,
    RowError,
    html_to_text,
    iter_rows,
    page_documents,
)
from frames_agent.eval.crag.runner import CragSettings, crag_run_dir, run
from frames_agent.eval.crag.score import CragRecord
from frames_agent.retrieval.context import chunk_text
from frames_agent.retrieval.crag.client import CRAGClient
from frames_agent.retrieval.crag.server import ServerProcess, free_port
from frames_agent.retrieval.crag.tools import crag_tools
from frames_agent.retrieval.types import Retriever
from tests.shared_data import CRAG_ROWS, needs_crag, needs_crag_rows

DEV_ROWS = [json.loads(line) for line in bz2.open(default_data(), "rt")] if CRAG_ROWS.is_file() else []
PAGE = "<html><head><title>T</title><script>var x=1;</script></head><body><article><h1>Ritchie</h1>" \
       "<p>Lock, Stock and Two Smoking Barrels is a 1998 crime comedy film written and directed by Guy Ritchie. " \
       "It was produced by Matthew Vaughn and stars Jason Flemyng, Dexter Fletcher and Jason Statham.</p>" \
       "<p>The film was released in the United Kingdom on 28 August 1998.</p></article></body></html>"


def read_results(path) -> list[CragRecord]:
    """Every record of a results.jsonl, in file order."""
    records, _ = crag_run_dir(path.parent).load_records()
    return list(records.values())


def _row(i: int, **over) -> dict:
    base = {"interaction_id": f"id-{i}", "query_time": "03/01/2024, 10:00:00 PT", "domain": "movie",
            "question_type": "simple", "static_or_dynamic": "static",
            "query": "who directed lock, stock and two smoking barrels?", "answer": "guy ritchie", "alternative_answers": "[]",
            "search_results": [{"page_name": "Lock, Stock", "page_url": "u1", "page_snippet": "a 1998 film by Guy Ritchie",
                                "page_result": PAGE, "page_last_modified": ""}]}
    return {**base, **over}


def _write(path, lines: list) -> None:
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else json.dumps(x).encode() for x in lines) + b"\n")


def test_html_to_text_uses_trafilatura_and_falls_back():
    text, how = html_to_text(PAGE)
    assert how == "trafilatura" and "directed by Guy Ritchie" in text and "var x" not in text
    text, how = html_to_text("<div><span>Guy Ritchie directed it<td></div></table>")
    assert "Guy Ritchie directed it" in text and how in ("trafilatura", "fallback")
    assert html_to_text("") == ("", "empty") and html_to_text("<script>x</script>")[0] == ""
    text, _ = html_to_text("<p>caf\udce9 Guy Ritchie directed the film in London in 1998 with friends.</p>")
    assert "Guy Ritchie" in text and "\udce9" not in text


def test_chunks_are_about_100_words():
    chunks = chunk_text(" ".join(f"word{i}." for i in range(450)), CHUNK_WORDS, MAX_CHUNKS_PER_PAGE)
    assert [len(c.split()) for c in chunks] == [100, 100, 100, 100, 50]


def test_page_documents_dedup_pages_and_count_empty_ones():
    pages = [{"page_name": "A", "page_url": "u", "page_result": PAGE, "page_snippet": "snip <b>bold</b>"},
             {"page_name": "A", "page_url": "u", "page_result": PAGE},
             {"page_name": "B", "page_url": "v", "page_result": ""}, "not a page"]
    docs, stats = page_documents("r", pages)
    assert (stats.pages, stats.duplicates, stats.empty, len(stats.warnings)) == (3, 1, 1, 1)
    assert docs[0].text == "snip bold" and docs[0].id == "r:p0:c0" and docs[0].article_id == "r:p0:c0"


def test_chunk_retriever_ranks_by_bm25_and_is_a_retriever():
    docs, _ = page_documents("r", [{"page_name": "x", "page_result": PAGE}, {"page_name": "y", "page_result":
                                   "<p>" + "Unrelated text about gardening and roses. " * 30 + "</p>"}])
    retriever = ChunkRetriever(docs)
    assert isinstance(retriever, Retriever)
    hits = retriever.search("who directed lock stock", 3)
    assert hits and hits[0].title == "x" and hits[0].score > 0
    assert retriever.search("the of and") == [] and ChunkRetriever([]).search("anything") == []
    assert retriever.doc(hits[0].id) == docs[0] and retriever.by_title("Y").title == "y"


@needs_crag_rows
def test_dev_rows_load():
    rows = list(iter_rows(default_data()))
    assert len(rows) == 10 and all(isinstance(r, CragRow) for r in rows)
    assert rows[0].query_time == "02/28/2024, 10:04:54 PT" and len(rows[0].pages) == 5


def test_bad_lines_become_row_errors_and_warnings(tmp_path):
    path = tmp_path / "rows.jsonl"
    latin1 = json.dumps(_row(6, query="caf\u00e9 ok?")).encode().replace(b"caf\\u00e9", b"caf\xe9")
    _write(path, [_row(0), b"{not json", _row(2, answer=None), [1, 2], _row(4, search_results=None),
                  _row(5), latin1])
    items = list(iter_rows(path))
    assert [type(i).__name__ for i in items] == ["CragRow", "RowError", "RowError", "RowError", "CragRow", "CragRow", "CragRow"]
    assert "not valid JSON" in items[1].message and "missing field 'answer'" in items[2].message
    assert items[4].warnings == ["no search_results; answering without pages"]
    assert items[5].warnings == [] and "non-UTF-8" in items[6].warnings[0]


def test_truncated_bz2_yields_the_rows_before_the_cut_and_an_error(tmp_path):
    full = bz2.compress(b"".join(json.dumps(_row(i)).encode() + b"\n" for i in range(400)), compresslevel=1)
    path = tmp_path / "cut.jsonl.bz2"
    path.write_bytes(full[: len(full) * 2 // 3])
    items = list(iter_rows(path))
    assert isinstance(items[-1], RowError) and "truncated" in items[-1].message
    assert all(isinstance(i, CragRow) for i in items[:-1]) and len(items) > 1


def test_not_a_bz2_file_is_a_row_error(tmp_path):
    path = tmp_path / "bad.jsonl.bz2"
    path.write_bytes(b"this is not bzip2 data at all")
    items = list(iter_rows(path))
    assert len(items) == 1 and "cannot read it" in items[0].message


@needs_crag_rows
def test_run_on_the_dev_rows_scores_and_resumes(tmp_path):
    llm = ScriptedLLM(responder=lambda m: "The pages say so.\nAnswer: universal pictures")
    summary = run(default_data(), tmp_path, llm, None, CragSettings(model="scripted"), log=lambda s: None)
    # no judge: the one exact match is accurate, the other nine are unrated, never incorrect
    o = summary.overall
    assert summary.rows == 10 and (o.accurate, o.incorrect, o.unrated, o.rated) == (1, 0, 9, 1)
    assert summary.by_domain["movie"].n == 3 and len(llm.calls) == 10
    assert "02/28/2024, 10:04:54 PT" in llm.prompts[0] and "Microsoft Office 2019" in llm.prompts[0]
    records = read_results(tmp_path / "results.jsonl")
    assert len(records) == 10 and records[-1].prediction == "universal pictures" and records[-1].documents
    again = ScriptedLLM([])
    summary2 = run(default_data(), tmp_path, again, None, CragSettings(model="scripted"), log=lambda s: None)
    assert again.calls == [] and summary2.resumed == 10 and summary2.overall == summary.overall
    assert json.loads((tmp_path / "summary.json").read_text())["rows"] == 10


def test_a_failing_row_is_recorded_and_retried_on_resume(tmp_path):
    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0), _row(1), _row(2, answer=None)])
    llm = ScriptedLLM([RuntimeError("model crashed"), "Answer: Guy Ritchie"])
    summary = run(path, tmp_path / "out", llm, None, CragSettings(model="scripted"), log=lambda s: None)
    records = read_results(tmp_path / "out" / "results.jsonl")
    assert records[0].error == "RuntimeError: model crashed" and records[0].outcome == "missing"
    assert records[1].outcome == "accurate" and records[2].outcome is None
    assert summary.overall.n == 2 and summary.errors == 1 and "missing field 'answer'" in summary.unscorable[0]
    retry = ScriptedLLM(["Answer: guy ritchie"])
    summary = run(path, tmp_path / "out", retry, None, CragSettings(model="scripted"), log=lambda s: None)
    assert len(retry.calls) == 1 and summary.overall.accurate == 2 and summary.errors == 0


def test_a_run_recorded_with_a_retired_scoring_option_resumes_at_the_official_value_only(tmp_path):
    path, out = tmp_path / "rows.jsonl", tmp_path / "out"
    _write(path, [_row(0), _row(1)])
    run(path, out, ScriptedLLM(["Answer: guy ritchie"]), None, CragSettings(model="scripted", limit=1),
        log=lambda s: None)
    config = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**config, "scoring": "official", "alternatives": False}))
    summary = run(path, out, ScriptedLLM(["Answer: guy ritchie"]), None, CragSettings(model="scripted"),
                  log=lambda s: None)
    assert summary.resumed == 1 and summary.overall.accurate == 2
    (out / "config.json").write_text(json.dumps({**config, "scoring": "ours"}))
    with pytest.raises(FramesAgentError, match="retired scoring 'ours'"):
        run(path, out, ScriptedLLM([]), None, CragSettings(model="scripted"), log=lambda s: None)


def test_results_of_another_model_are_not_mixed(tmp_path):
    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0)])
    run(path, tmp_path / "out", ScriptedLLM(["Answer: x"]), None, CragSettings(model="a"), log=lambda s: None)
    with pytest.raises(FramesAgentError, match=r"different configuration \(model was 'a', now 'b'\)"):
        run(path, tmp_path / "out", ScriptedLLM([]), None, CragSettings(model="b"), log=lambda s: None)


def test_judge_is_used_for_non_exact_answers(tmp_path):
    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0)])
    judge = ScriptedLLM(['{"score": 1, "explanation": "same"}'])
    run(path, tmp_path / "out", ScriptedLLM(["Answer: It was Guy Ritchie."]), judge, CragSettings(model="s"),
        log=lambda s: None)
    record = read_results(tmp_path / "out" / "results.jsonl")[0]
    assert (record.outcome, record.method, record.judge_explanation) == ("accurate", "judge", "same")


def _plan(calls, queries=("lock stock director",)):
    return json.dumps({"thought": "t", "queries": list(queries), "tool_calls": calls, "enough": False})


@needs_crag
@pytest.mark.slow  # a CRAG server process
def test_task2_uses_kg_tools_and_pages(tmp_path):
    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0, query="what is meta's eps?", answer="22.95", domain="finance")])
    llm = ScriptedLLM([_plan([{"name": "finance_get_eps", "args": {"ticker_name": "META"}}]), "Answer: 22.95"])
    with ServerProcess(shared_dir() / "data" / "crag") as server:
        tools = crag_tools(CRAGClient(server.url))
        summary = run(path, tmp_path / "out", llm, None, CragSettings(task=2, model="s"), tools, log=lambda s: None)
    record = read_results(tmp_path / "out" / "results.jsonl")[0]
    assert record.tool_calls == [{"name": "finance_get_eps", "args": {"ticker_name": "META"}}]
    assert any(d["source"] == "crag:finance_get_eps" for d in record.documents)
    assert any(d["source"] == "crag:page" for d in record.documents)
    assert "22.95" in llm.prompts[-1] and summary.overall.accurate == 1


def test_task2_with_the_server_down_still_answers(tmp_path):
    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0)])
    tools = crag_tools(CRAGClient(f"http://127.0.0.1:{free_port()}", retries=0), ["finance"])
    llm = ScriptedLLM([_plan([{"name": "finance_get_eps", "args": {"ticker_name": "META"}}]), "Answer: Guy Ritchie"])
    run(path, tmp_path / "out", llm, None, CragSettings(task=2, model="s"), tools, log=lambda s: None)
    record = read_results(tmp_path / "out" / "results.jsonl")[0]
    assert record.outcome == "accurate" and "connection refused" in record.step_errors[0]


def test_kg_server_selection(monkeypatch):
    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(FramesAgentError, match="no CRAG API server answers at"):
        crag_tools_for(dead)
    monkeypatch.delenv("CRAG_SERVER", raising=False)
    monkeypatch.setattr("frames_agent.retrieval.crag.client.DEFAULT_SERVER", dead)
    started = []

    class FakeProcess:  # stands in for the child process; the tools then point at its URL
        url = "http://127.0.0.1:1"

    tools, process = crag_tools_for(None, start=lambda: started.append(1) or FakeProcess())
    assert started == [1] and len(tools) == 38 and isinstance(process, FakeProcess)


def test_cli_crag_runs_and_prints_the_table(tmp_path, monkeypatch, capsys):
    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0), _row(1), _row(2)])
    monkeypatch.setattr("frames_agent.agent.llm.resolve_model",
                        lambda spec, **kw: ScriptedLLM(responder=lambda m: "Answer: guy ritchie"))
    code = cli.main(["crag", "--data", str(path), "--out", str(tmp_path / "out"), "--judge", "none", "--limit", "2"])
    out = capsys.readouterr().out
    overall = next(line for line in out.splitlines() if line.startswith("overall"))
    assert code == 0 and overall.split()[1:4] == ["2", "2", "1.000"]
    assert "KG: none (task 1: web pages only)" in out and "judge: none" in out
    assert len(read_results(tmp_path / "out" / "results.jsonl")) == 2


def test_cli_crag_bad_data_path_is_one_line(tmp_path, capsys):
    assert cli.main(["crag", "--data", str(tmp_path / "none.jsonl")]) == 2
    assert capsys.readouterr().err.startswith("error: no CRAG data file")


def test_cli_crag_bad_agent_flag_is_one_line(capsys):
    assert cli.main(["crag", "--k", "0"]) == 2
    assert capsys.readouterr().err.startswith("error: --k: Input should be greater than or equal to 1")


# --- the run directory: configuration, lock, keys, refusals -------------------------------------------------------
@pytest.mark.parametrize("change,key", [({"judge": "other:judge"}, "judge"), ({"k": 3}, "k"), ({"n": 2}, "n"),
                                        ({"n_docs": 5}, "n_docs")])
def test_a_rerun_with_other_settings_is_refused_naming_the_setting(tmp_path, change, key):
    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0)])
    run(path, tmp_path / "out", ScriptedLLM(["Answer: guy ritchie"]), None, CragSettings(model="s"), log=lambda s: None)
    settings = CragSettings(model="s", **change)
    with pytest.raises(FramesAgentError, match=rf"different configuration \((agent\.)?{key} was .*, now"):
        run(path, tmp_path / "out", ScriptedLLM([]), None, settings, log=lambda s: None)


def test_a_second_run_into_the_same_out_is_refused_by_the_lock(tmp_path):
    from frames_agent.eval.crag.runner import crag_run_dir

    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0)])
    with crag_run_dir(tmp_path / "out").locked():
        with pytest.raises(FramesAgentError, match="another run is writing to"):
            run(path, tmp_path / "out", ScriptedLLM([]), None, CragSettings(model="s"), log=lambda s: None)


def test_a_repeated_interaction_id_is_scored_under_each_row_and_said(tmp_path):
    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0), _row(0, answer="matthew vaughn")])
    notes: list[str] = []
    llm = ScriptedLLM(["Answer: guy ritchie", "Answer: matthew vaughn"])
    summary = run(path, tmp_path / "out", llm, None, CragSettings(model="s"), log=notes.append)
    records = read_results(tmp_path / "out" / "results.jsonl")
    assert [(r.row, r.interaction_id, r.outcome) for r in records] == [(0, "id-0", "accurate"), (1, "id-0", "accurate")]
    assert summary.rows == 2 and summary.repeated_ids == ["id-0"]
    assert any("interaction_id id-0 repeats (data rows 1 and 2)" in n for n in notes)
    again = ScriptedLLM([])
    assert run(path, tmp_path / "out", again, None, CragSettings(model="s"), log=notes.append).resumed == 2


def test_results_without_a_config_are_refused(tmp_path):
    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0)])
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.jsonl").write_text('{"row": 0, "interaction_id": "id-0", "outcome": "accurate"}\n')
    with pytest.raises(FramesAgentError, match="has results.jsonl but no config.json"):
        run(path, tmp_path / "out", ScriptedLLM([]), None, CragSettings(model="s"), log=lambda s: None)


@pytest.mark.parametrize("content", [b"", b"interaction_id,query,answer\nid-0,who?,guy ritchie\n"])
def test_crag_on_an_empty_file_or_a_csv_exits_non_zero_and_writes_no_config(tmp_path, monkeypatch, capsys, content):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(content)
    monkeypatch.setattr("frames_agent.agent.llm.resolve_model", lambda spec, **kw: ScriptedLLM([]))
    code = cli.main(["crag", "--data", str(path), "--out", str(tmp_path / "out"), "--judge", "none"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "holds no CRAG rows" in err and err.count("\n") == 1
    assert not (tmp_path / "out" / "config.json").exists()


def test_crag_where_every_row_failed_exits_non_zero(tmp_path, monkeypatch, capsys):
    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0), _row(1)])
    monkeypatch.setattr("frames_agent.agent.llm.resolve_model",
                        lambda spec, **kw: ScriptedLLM([RuntimeError("model gone"), RuntimeError("model gone")]))
    code = cli.main(["crag", "--data", str(path), "--out", str(tmp_path / "out"), "--judge", "none"])
    assert code == 2 and "every CRAG row failed (2 of 2" in capsys.readouterr().err


def test_judge_none_leaves_a_paraphrase_unrated_and_rejudge_rates_it(tmp_path, monkeypatch, capsys):
    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0), _row(1), _row(2)])
    answers = ["Answer: guy ritchie", "Answer: It was directed by Guy Ritchie.", "Answer: matthew vaughn"]
    monkeypatch.setattr("frames_agent.agent.llm.resolve_model", lambda spec, **kw: ScriptedLLM(list(answers)))
    out = tmp_path / "out"
    assert cli.main(["crag", "--data", str(path), "--out", str(out), "--judge", "none"]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].startswith("score over 1 rated of 3: 1.000") and "2 unrated" in printed
    saved = json.loads((out / "summary.json").read_text())["overall"]
    assert (saved["rated"], saved["unrated"], saved["incorrect"]) == (1, 2, 0)
    judge = ScriptedLLM(responder=lambda m: '{"score": 1}' if "directed by guy ritchie" in str(m[-1].content).lower()
                        else '{"score": 0}')
    monkeypatch.setattr("frames_agent.agent.llm.resolve_model", lambda spec, **kw: judge)
    assert cli.main(["rejudge", str(out), "--judge", "scripted:judge"]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].startswith("score 0.333 (accuracy 0.667, hallucination 0.333)")
    saved = json.loads((out / "summary.json").read_text())
    assert (saved["overall"]["rated"], saved["overall"]["accurate"], saved["overall"]["incorrect"]) == (3, 2, 1)
    assert "rejudged by scripted:judge" in saved["judge"] and len(judge.calls) == 2
    records = read_results(out / "results.jsonl")
    assert [r.method for r in records] == ["exact", "judge", "judge"]
    again = run(path, out, ScriptedLLM([]), None, CragSettings(model=saved["model"]), log=lambda s: None)
    assert again.resumed == 3 and again.overall.unrated == 0 and "rejudged by scripted:judge" in again.judge


def test_report_over_a_crag_run_prints_its_table_from_the_records(tmp_path, capsys):
    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0), _row(1)])
    run(path, tmp_path / "out", ScriptedLLM(["Answer: guy ritchie", "Answer: by Guy Ritchie"]), None,
        CragSettings(model="s"), log=lambda s: None)
    (tmp_path / "out" / "summary.json").unlink()
    assert cli.main(["report", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "score over 1 rated of 2" in out and json.loads((tmp_path / "out" / "summary.json").read_text())["rows"] == 2


def test_cli_crag_row_past_its_deadline_is_recorded_and_the_run_goes_on(tmp_path, monkeypatch, capsys):
    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0, query="who directed a film that never ends?"), _row(1)])
    seen: dict = {}
    hang = [True]

    class HungOnOneRow(ScriptedLLM):
        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            if hang[0] and "never ends" in str(messages[-1].content):
                import time
                time.sleep(20)  # a model that does not answer this row
            return super()._generate(messages, stop, run_manager, **kwargs)

    def resolve(spec, **kw):
        seen.update(kw)
        return HungOnOneRow(responder=lambda m: "Answer: guy ritchie")

    monkeypatch.setattr("frames_agent.agent.llm.resolve_model", resolve)
    code = cli.main(["crag", "--data", str(path), "--out", str(tmp_path / "out"), "--judge", "none",
                     "--timeout", "7", "--question-timeout", "1"])
    records = read_results(tmp_path / "out" / "results.jsonl")
    assert code == 0 and seen["timeout"] == 7.0
    assert "QuestionTimeout" in records[0].error and records[1].outcome == "accurate"
    hang[0] = False
    resumed = cli.main(["crag", "--data", str(path), "--out", str(tmp_path / "out"), "--judge", "none",
                        "--question-timeout", "30"])  # a deadline may change on resume
    assert resumed == 0 and "different configuration" not in capsys.readouterr().err
    assert not read_results(tmp_path / "out" / "results.jsonl")[0].error


def test_every_crag_report_says_which_kg_answered(tmp_path):
    """Task-2 scores over the local recordings are not CRAG task-2 scores: the report must say which KG it was."""
    from frames_agent.eval.crag.commands import kg_source

    class Local:
        url = "http://127.0.0.1:5555"

    assert kg_source(None, Local()).startswith("local recordings (compatible server at http://127.0.0.1:5555")
    assert kg_source("http://kg.example:8000", None) == "CRAG_SERVER http://kg.example:8000"
    path = tmp_path / "rows.jsonl"
    _write(path, [_row(0)])
    summary = run(path, tmp_path / "out", ScriptedLLM(responder=lambda m: "Answer: guy ritchie"), None,
                  CragSettings(task=2, model="s"), log=lambda s: None, kg=kg_source(None, Local()))
    from frames_agent.eval.crag.score import format_table

    assert summary.kg.startswith("local recordings") and "KG: local recordings" in format_table(summary)
    saved = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert saved["kg"].startswith("local recordings")
