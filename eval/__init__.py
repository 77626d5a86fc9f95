"""Evaluation: FRAMES (`eval.frames`) and CRAG (`eval.crag`) runs over one resumable run directory, with judges
and paired statistics."""
