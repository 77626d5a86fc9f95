"""FRAMES evaluation: datasets, the paper's systems (multistep, naive, BM25-R, oracle), the autorater, runs and reports.

    from eval.frames import RunSettings, run_frames, load_questions, Autorater, QuestionRecord, RunSummary
"""
from eval.frames.autorater import Autorater
from eval.frames.datasets import Dataset, Question, load_questions
from eval.frames.metrics import RunSummary
from eval.frames.records import QuestionRecord
from eval.frames.runner import RunSettings, run_frames

__all__ = ["Autorater", "Dataset", "Question", "QuestionRecord", "RunSettings", "RunSummary", "load_questions",
           "run_frames"]
