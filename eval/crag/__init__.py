"""CRAG evaluation: rows and their pages, the runner (task 1: pages; task 2: pages + KG tools) and CRAG scoring.

    from frames_agent.eval.crag import CragSettings, run, score_prediction, CragJudge, CragRecord, CragSummary
"""
from frames_agent.eval.crag.records import CragRecord, CragSummary
from frames_agent.eval.crag.runner import CragSettings, run
from frames_agent.eval.crag.score import CragJudge, score_prediction

__all__ = ["CragJudge", "CragRecord", "CragSettings", "CragSummary", "run", "score_prediction"]
