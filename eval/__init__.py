"""Evaluation: FRAMES (`eval.frames`) and CRAG (`eval.crag`) runs over one resumable run directory, with one judge
interface and paired statistics.

    from eval import Judge, Verdict, RunDir
"""
from eval.judge import Judge, Verdict
from eval.rundir import RunDir
from retrieval.version import __version__

__all__ = ["Judge", "RunDir", "Verdict", "__version__"]
