"""bench/answer_context.py on the tiny real index: a recorded run's answer prompt re-rendered under a grid of
selection settings, and the refusal of check-part runs unless it only reports."""
from __future__ import annotations

import json

from bench.answer_context import main
from frames_agent.eval.frames.records import QuestionRecord

QUESTION = "In which year did the stadium of the football club from the birthplace of Brennick's mayor open?"


def _run_dir(tmp_path, split: str = "tune"):
    run = tmp_path / "multi"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"system": "multistep", "split": split,
                                                 "agent": {"k": 2, "n": 2, "n_docs": 3}}))
    steps = [{"step": 1, "queries": ["Tomas Ferrante"], "origins": ["model"]},
             {"step": 2, "queries": ["Kestrel Valley FC", "Gannet Park"], "origins": ["model", "model"]}]
    record = QuestionRecord(id="1", question=QUESTION, gold_answer="1962", steps=steps,
                            gold_titles=["Tomas Ferrante", "Port Alder", "Kestrel Valley FC", "Gannet Park"],
                            covered_titles=["Tomas Ferrante", "Port Alder", "Kestrel Valley FC", "Gannet Park"])
    (run / "results.jsonl").write_text(record.model_dump_json() + "\n")
    return run


def test_each_setting_re_renders_the_recorded_context(tmp_path, tiny_index, capsys):
    assert main([str(_run_dir(tmp_path)), "--index", str(tiny_index), "--json",
                 "--grid", "passage_words=20,80", "--grid", "answer_budget=60,1600"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["setting"] for r in rows] == [{"passage_words": w, "answer_budget": b} for w in (20, 80) for b in (60, 1600)]
    for row in rows:
        assert row["questions"] == 1 and row["articles"] > 0 and row["covered_recall"] > 0
    small, large = rows[2], rows[3]  # 80 words: a 60-token prompt shows fewer gold articles than 1,600 tokens
    assert small["gold_shown"] < large["gold_shown"]
    assert large["answer_in_prompt"] == 1.0, "Gannet Park's opening year is in the prompt when everything fits"


def test_the_bench_refuses_check_runs_unless_it_only_reports(tmp_path, tiny_index, capsys):
    run = _run_dir(tmp_path, split="check")
    assert main([str(run), "--index", str(tiny_index)]) == 2
    err = capsys.readouterr().err
    assert "refuses --split check" in err and "--report-only" in err and err.count("\n") == 1
    assert main([str(run), "--index", str(tiny_index), "--report-only", "--json"]) == 0


def test_contexts_are_rebuilt_as_the_merge_node_read_them(tiny_retriever):
    from bench.answer_context import rebuild

    # Step 2 searched "Brennick" again 3 hits past the 1 that step 1 read (a repeat): the rebuilt context holds them.
    steps = [{"step": 1, "queries": ["Brennick"], "origins": ["model"]},
             {"step": 2, "queries": ["Brennick"], "origins": ["repeat"], "query_depths": [4]}]
    context, _ = rebuild({"steps": steps}, "multistep", {"n_docs": 1}, tiny_retriever)
    assert {e.key for e in context} == {d.key for d in tiny_retriever.search("Brennick", 4)}
    # A record without depths (written before they were recorded): a repeat read as many hits as it returned.
    steps[1] = {"step": 2, "queries": ["Brennick"], "origins": ["repeat"], "query_hits": [4]}
    older, _ = rebuild({"steps": steps}, "multistep", {"n_docs": 1}, tiny_retriever)
    assert {e.key for e in older} == {e.key for e in context}
