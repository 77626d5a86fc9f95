"""Redirect-aware recall: a gold link that is a redirect counts its target article."""
from __future__ import annotations

from frames_agent.agent.state import AgentResult, StepRecord
from frames_agent.eval.frames.metrics import retrieval_figures
from frames_agent.retrieval.types import Document


def test_a_gold_redirect_counts_its_target():
    docs = [Document(id="t", title="Tomas Ferrante", text="mayor")]
    result = AgentResult(question="q", documents=docs, steps=[StepRecord(step=2, new_doc_ids=["t"])])
    gold = ("Mayor of Brennick", "Olse River")
    plain = retrieval_figures(gold, list(gold), result)
    assert plain["found_step"] == {"Mayor of Brennick": None, "Olse River": None}
    aliased = retrieval_figures(gold, list(gold), result, {"mayor of brennick": "tomas ferrante"})
    assert aliased["found_step"] == {"Mayor of Brennick": 2, "Olse River": None}
    assert aliased["recall"] == 0.5 and aliased["recall_by_step"] == [0.0, 0.5]
