"""FRAMES evaluation: datasets, the paper's systems (multistep, naive, BM25-R, oracle), the autorater, runs and reports.

    from frames_agent.eval.frames import FramesRunSettings, run_frames, load_questions, Autorater, QuestionRecord, RunSummary
"""
from frames_agent.eval.frames.autorater import Autorater
from frames_agent.eval.frames.datasets import Dataset, Question, load_questions
from frames_agent.eval.frames.metrics import RunSummary
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.frames.runner import FramesRunSettings, run_frames

__all__ = ["Autorater", "Dataset", "Question", "QuestionRecord", "FramesRunSettings", "RunSummary", "load_questions",
           "run_frames"]
