"""Runs compared: paired tests of each run against the first (`paired`) and everything a comparison writes
(`tables`: comparison.md, .csv, .json, the overlay figure and report.html).

    from frames_agent.eval.frames.comparison.paired import comparison
    from frames_agent.eval.frames.comparison.tables import write_compared
"""
