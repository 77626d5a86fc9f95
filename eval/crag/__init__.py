"""CRAG evaluation: rows and their pages, the runner (task 1: pages; task 2: pages + KG tools) and CRAG scoring.

    from eval.crag import CragSettings, run, score_prediction
"""
from eval.crag.runner import CragSettings, run
from eval.crag.score import score_prediction

__all__ = ["CragSettings", "run", "score_prediction"]
