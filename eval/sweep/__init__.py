"""Component studies: `sweep` runs every cell of a configuration grid as an ordinary FRAMES run directory, in this
process or on a Ray cluster (`eval.frames.executors`), and reports the cells side by side.

    from frames_agent.eval.sweep import Axis, Cell, Sweep, parse_grid, plan_sweep, run_sweep, write_report
"""
from frames_agent.eval.sweep.grid import Axis, Cell, parse_grid
from frames_agent.eval.sweep.report import write_report
from frames_agent.eval.sweep.runner import Sweep, plan_sweep, run_sweep

__all__ = ["Axis", "Cell", "Sweep", "parse_grid", "plan_sweep", "run_sweep", "write_report"]
