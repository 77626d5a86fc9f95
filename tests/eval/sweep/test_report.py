"""The sweep report's paired effects: a one-question sweep writes its tables and says no test was made."""
from __future__ import annotations

from frames_agent.eval.frames.metrics import run_summary
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.sweep.report import CellRun, effect, effects_table


def _cell(name: str, covered: float) -> CellRun:
    records = [QuestionRecord(id="0", covered_recall=covered, recall=covered, gold_titles=["T"], covered_titles=["T"])]
    return CellRun(name, {"k": name}, {}, run_summary(records), records)


def test_a_one_question_difference_is_shown_without_a_test():
    found = effect(_cell("3", 1.0), _cell("1", 0.0))
    assert found["covered_recall"]["diff"] == -1.0 and found["covered_recall"]["p"] is None
    table = effects_table([{"component": "k", "from": "3", "to": "1", "cell": "k=1", **found}])
    assert "-1.000 [-1.000, -1.000] no test (n=1)" in table
