"""bench/replay_retrieval.py on the tiny real index: recorded model queries replayed with proposer variants, the
model-free mode, and the refusal of check questions."""
from __future__ import annotations

import json

from bench.replay_retrieval import main, model_queries
from frames_agent.eval.frames.records import QuestionRecord
from tests.eval.frames.test_runner import TINY

QUESTION = "In which year did the stadium of the football club from the birthplace of Brennick's mayor open?"


def test_model_queries_are_the_recorded_model_ones():
    record = {"steps": [{"queries": ["a", "b", "c"], "origins": ["model", "proposer", "question"]},
                        {"queries": ["d", "e"], "filled_queries": ["e"]}]}  # an older record: no origins
    assert model_queries(record) == [["a"], ["d"]]


def test_the_model_repeats_are_replayed_after_its_new_queries():
    # The model repeated "a": dropped, or searched deeper as origin "repeat" (still listed as dropped, in the model's
    # words): the variant replayed decides which.
    record = {"steps": [{"queries": ["a"], "origins": ["model"]},
                        {"queries": ["b", "a"], "origins": ["model", "repeat"], "dropped_queries": ["A"]},
                        {"queries": ["c"], "origins": ["model"], "dropped_queries": ["a", "b"]}]}
    assert model_queries(record) == [["a"], ["b", "A"], ["c", "a", "b"]]


def _run_dir(tmp_path):
    run = tmp_path / "multi"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"system": "multistep", "agent": {"k": 2, "n": 2, "n_docs": 2}}))
    steps = [{"queries": ["Tomas Ferrante"], "origins": ["model"]},
             {"queries": ["Kestrel Valley FC", "Brennick"], "origins": ["model", "proposer"]}]
    record = QuestionRecord(id="1", question=QUESTION, gold_answer="1962", steps=steps,
                            gold_titles=["Tomas Ferrante", "Port Alder", "Kestrel Valley FC", "Gannet Park"])
    (run / "results.jsonl").write_text(record.model_dump_json() + "\n")
    return run


def test_replaying_a_recorded_run_keeps_its_model_queries(tmp_path, tiny_index, capsys):
    code = main([str(_run_dir(tmp_path)), "--index", str(tiny_index), "--split", "check", "--report-only", "--json",
                 "--grid", "propose_queries=true,false"])
    assert code == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["setting"] for r in rows] == ['{"propose_queries": true}', '{"propose_queries": false}']
    for r in rows:
        assert r["questions"] == 1 and r["queries_by_origin"]["model"] == 2 and r["articles"] > 0
        assert sum(r["gold_by_origin"].values()) >= 2, "Tomas Ferrante and Kestrel Valley FC, at least"


def test_without_a_run_the_question_and_the_proposer_search_alone(tmp_path, tiny_index, capsys):
    assert main(["--data", TINY, "--index", str(tiny_index), "--json", "--grid", "n=3"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["questions"] == 1, "one tune question in the tiny data"
    assert set(row["queries_by_origin"]) <= {"fallback", "proposer", "question"}
    assert row["queries_by_origin"].get("fallback", 0) + row["queries_by_origin"].get("question", 0) >= 1


def test_the_bench_refuses_check_questions_unless_it_only_reports(tmp_path, capsys):
    assert main([str(_run_dir(tmp_path)), "--split", "check"]) == 2
    err = capsys.readouterr().err
    assert "refuses --split check" in err and "--report-only" in err and err.count("\n") == 1


def test_a_dense_weight_searches_through_the_hybrid_retriever(tmp_path, tiny_index, capsys, monkeypatch):
    import frames_agent.retrieval.dense as dense

    opened = []

    def fake_open_hybrid(bm25, weight):
        opened.append(weight)
        return bm25  # the wiring is under test, not the vectors (tests/retrieval/dense covers those)

    monkeypatch.setattr(dense, "open_hybrid", fake_open_hybrid)
    code = main([str(_run_dir(tmp_path)), "--index", str(tiny_index), "--split", "check", "--report-only", "--json",
                 "--grid", "dense_weight=0,0.5"])
    assert code == 0 and opened == [0.5], "only the variant with a dense weight opens the hybrid retriever"
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_a_dense_weight_without_dense_vectors_is_one_line(tmp_path, tiny_index, capsys, monkeypatch):
    monkeypatch.setenv("FRAMES_AGENT_CACHE", str(tmp_path / "cache"))  # no dense vectors there
    code = main([str(_run_dir(tmp_path)), "--index", str(tiny_index), "--split", "check", "--report-only",
                 "--grid", "dense_weight=0.5"])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if not line.endswith("model queries of " + str(tmp_path / "multi"))]
    assert code == 2 and len(errors) == 1 and errors[0].startswith("error: ") and "index dense" in errors[0]
