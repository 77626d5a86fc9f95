"""Runs compared: paired tests of each run against the first (`paired`), the tables of numbers (`tables`:
comparison.md, .csv, .json) and everything a comparison writes (`files`: those, the overlay figure, report.html).

    from frames_agent.eval.frames.comparison.paired import comparison
    from frames_agent.eval.frames.comparison.files import write_comparison
"""
