"""Per-question figures: redirect-aware recall, and where the gold came from (per gold article its step, the articles
read by then and its query's origin; totals per origin in the summary and the report), on hand-made results."""
from __future__ import annotations

from frames_agent.agent.state import AgentResult, StepRecord
from frames_agent.eval.frames.metrics import retrieval_figures, run_summary
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.frames.report import origin_lines
from frames_agent.retrieval.types import Document


def _doc(doc_id: str, title: str, article: str | None = None) -> Document:
    return Document(id=doc_id, title=title, text="", article_id=article)


def test_each_gold_article_keeps_its_step_rank_and_origin():
    docs = [_doc("a", "Marta Kowalczyk"), _doc("b", "Halvorsen Prize"), _doc("c", "Brennick"),
            _doc("c2", "Brennick", article="c"), _doc("d", "Tomas Ferrante")]
    steps = [StepRecord(step=1, queries=["Marta Kowalczyk", "Halvorsen Prize"], origins=["model", "model"],
                        query_hits=[1, 1], new_doc_ids=["a", "b"], new_doc_origins=["model", "model"]),
             StepRecord(step=2, queries=["Brennick", "born Brennick"], origins=["proposer", "repeat"],
                        new_doc_ids=["c", "c2", "d"], new_doc_origins=["proposer", "proposer", "repeat"])]
    gold = ("Brennick", "Mayor of Brennick", "Olse River")
    figures = retrieval_figures(gold, list(gold), AgentResult(question="q", documents=docs, steps=steps),
                                {"mayor of brennick": "tomas ferrante"})
    assert figures["found_step"] == {"Brennick": 2, "Mayor of Brennick": 2, "Olse River": None}
    # A second passage of Brennick (c2) is no new article: Ferrante is the 4th article read, not the 5th.
    assert figures["found_at"] == {"Brennick": 3, "Mayor of Brennick": 4, "Olse River": None}
    assert figures["found_origin"] == {"Brennick": "proposer", "Mayor of Brennick": "repeat", "Olse River": None}
    assert figures["articles_by_step"] == [2, 4]


def _record(qid: str, steps: list[dict], found_step: dict, found_origin: dict) -> QuestionRecord:
    return QuestionRecord(id=qid, gold_titles=list(found_step), covered_titles=list(found_step), steps=steps,
                          found_step=found_step, found_origin=found_origin, steps_run=len(steps),
                          articles_by_step=[sum(len(s["new_doc_ids"]) for s in steps[:i + 1]) for i in range(len(steps))])


def test_the_summary_totals_queries_articles_and_gold_per_origin():
    one = _record("1", [{"origins": ["model", "question"], "new_doc_ids": ["a", "b", "c"],
                         "new_doc_origins": ["model", "question", "question"]},
                        {"origins": ["model", "proposer"], "new_doc_ids": ["d"], "new_doc_origins": ["proposer"]}],
                  {"A": 1, "C": 1, "D": 2, "E": None}, {"A": "model", "C": "question", "D": "proposer", "E": None})
    two = _record("2", [{"origins": ["fallback"], "new_doc_ids": ["x"], "new_doc_origins": ["fallback"]},
                        {"origins": ["repeat"], "new_doc_ids": ["y", "z"], "new_doc_origins": ["repeat", "repeat"]}],
                  {"Y": 2, "Z": 2}, {"Y": "repeat", "Z": "repeat"})
    s = run_summary([one, two])
    assert s.queries_by_origin == {"model": 2, "question": 1, "proposer": 1, "fallback": 1, "repeat": 1}
    assert s.articles_by_origin == {"model": 1, "question": 2, "proposer": 1, "fallback": 1, "repeat": 2}
    assert s.gold_by_origin == {"model": 1, "question": 1, "proposer": 1, "repeat": 2}
    assert s.gold_by_step_origin == {"1": {"model": 1, "question": 1}, "2": {"proposer": 1, "repeat": 2}}
    assert s.articles_by_step == [2.0, 3.5] and s.articles_read == 3.5
    text = "\n".join(origin_lines(s))
    assert "## Where the gold came from" in text and "| repeat | 1 | 2 | 2 | 100.0 |" in text
    assert "| 2 | 0 | 1 | 0 | 0 | 2 |" in text, "step 2: proposer 1, repeat 2 (columns in origin order)"


def test_records_written_before_origins_were_recorded_still_summarise():
    old = QuestionRecord(id="1", gold_titles=["A"], covered_titles=["A"], found_step={"A": 1}, steps_run=1,
                         steps=[{"queries": ["q"], "new_doc_ids": ["a", "b"], "new_docs": 2}])
    s = run_summary([old])
    assert s.gold_by_origin == {"unknown": 1} and s.articles_by_origin == {"unknown": 2}
    assert s.articles_by_step == [2.0]


def test_a_gold_redirect_counts_its_target():
    docs = [Document(id="t", title="Tomas Ferrante", text="mayor")]
    result = AgentResult(question="q", documents=docs, steps=[StepRecord(step=2, new_doc_ids=["t"])])
    gold = ("Mayor of Brennick", "Olse River")
    plain = retrieval_figures(gold, list(gold), result)
    assert plain["found_step"] == {"Mayor of Brennick": None, "Olse River": None}
    aliased = retrieval_figures(gold, list(gold), result, {"mayor of brennick": "tomas ferrante"})
    assert aliased["found_step"] == {"Mayor of Brennick": 2, "Olse River": None}
    assert aliased["recall"] == 0.5 and aliased["recall_by_step"] == [0.0, 0.5]
