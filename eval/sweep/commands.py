"""`python cli.py sweep --grid KEY=V1,V2 ... [--systems ...] [frames flags] [--plan] [--executor ray]`."""
from __future__ import annotations

import argparse

from frames_agent.agent.commands import add_agent_flags
from frames_agent.eval.frames.commands import SYSTEM_CHOICES, add_eval_flags, build_components, check_extras


def _systems(text: str) -> str:
    """One --systems word: a system or a comma list of them (argparse's error names the bad one)."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    bad = [name for name in names if name not in SYSTEM_CHOICES]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"invalid choice: {bad[0] if bad else text!r} (choose from "
                                         f"{', '.join(SYSTEM_CHOICES)})")
    return ",".join(names)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the sweep subcommand."""
    parser = sub.add_parser(
        "sweep", help="run every cell of a configuration grid (locally or on a Ray cluster) and compare the cells",
        description="Each combination of the --grid values is an ordinary frames run directory under the sweep "
                    "directory (--out; resumable, locked, config-checked). Then SWEEP_DIR/sweep.md: a table of every "
                    "cell, paired tests against --baseline, the effect of each component one factor at a time, "
                    "a heat map (two-axis grids) and a recall-by-step overlay.")
    parser.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                        help="an axis: a frames flag that defines a run (k, n, n_docs, prompt, answer_prompt, model, "
                             "index, tools, answer_budget, ...) or any --set field (plan_budget, dense_weight, "
                             "passage_words, ...); repeatable; V1|V2 when a value holds commas")
    parser.add_argument("--systems", nargs="+", type=_systems, default=None, metavar="SYSTEM",
                        help=f"the system axis: {', '.join(SYSTEM_CHOICES)} (space- or comma-separated, as --grid "
                             "takes values)")
    parser.add_argument("--baseline", default=None, metavar="CELL",
                        help="the cell the others are tested against: its name (k=1_n=3) or KEY=V[,KEY=V] "
                             "(default: the first cell)")
    parser.add_argument("--plan", action="store_true", help="print the cells, their questions and the time "
                                                             "estimate; run nothing")
    add_agent_flags(parser)
    add_eval_flags(parser)
    parser.set_defaults(handler=run_sweep_command)


def run_sweep_command(args: argparse.Namespace) -> int:
    """Plan, run (or resume) every cell, and print the sweep table."""
    import sys

    from frames_agent.eval.errors import EvalError
    from frames_agent.eval.frames.executors import make_executor
    from frames_agent.eval.frames.runner import FramesRunSettings
    from frames_agent.eval.sweep.grid import parse_grid
    from frames_agent.eval.sweep.report import write_report
    from frames_agent.eval.sweep.runner import describe, plan_sweep, run_sweep

    systems = [name for item in args.systems for name in item.split(",")] if args.systems else None
    axes = parse_grid(args.grid, systems)
    sweep = plan_sweep(FramesRunSettings.from_args(args), axes, args.baseline)
    executor = make_executor(args)
    if args.plan:
        print("\n".join(describe(sweep, executor)))
        return 0
    for settings, _ in sweep.jobs:  # what every cell needs, checked before the first starts
        check_extras(settings)
    outcomes = run_sweep(sweep, executor, build_components, lambda s: print(s, file=sys.stderr))
    text, written = write_report(sweep)
    print(text)
    print("\n".join(f"wrote {path}" for path in written))
    broken = [o for o in outcomes if o.summary.n and o.summary.failed == o.summary.n]
    if broken and len(broken) == len(outcomes):
        first = broken[0].summary.failures[0]["error"] if broken[0].summary.failures else "unknown"
        raise EvalError(f"every question of every cell failed (first: {first}); see {broken[0].out / 'report.md'}")
    return 0
