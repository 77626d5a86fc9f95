"""Evaluation: FRAMES (`eval.frames`) and CRAG (`eval.crag`) runs over one resumable run directory, one judge
interface and paired statistics."""
from frames_agent.core.version import __version__
from frames_agent.eval.judge import Judge, Verdict
from frames_agent.eval.rundir import RunDir

__all__ = ["Judge", "RunDir", "Verdict", "__version__"]
