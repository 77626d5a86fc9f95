"""`python cli.py tune`: bootstrap few-shot demonstrations for the planning prompt on a train split."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from frames_agent.agent.commands import add_agent_flags
from frames_agent.eval.frames.split import SPLITS, refuse_check


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `tune` subcommand."""
    tune = sub.add_parser(
        "tune", help="optimise a planning prompt on train questions (bootstrapped few-shot demos)",
        description="Run the agent (retrieval only) on train questions with --prompt, keep the steps whose own "
                    "queries found gold articles as demonstrations, try demo sets drawn by --seed on a held-out "
                    "slice of the train questions, and write the prompt with the best held-out recall to --out "
                    "(usable as --prompt). Never give it the questions you evaluate on. Every run is saved in "
                    "WORK (default OUT.work/): a killed tune resumes where it stopped.")
    tune.add_argument("--train", required=True, help="train questions (.tsv/.csv/.jsonl with gold links)")
    tune.add_argument("--out", required=True, help="the prompt file to write")
    tune.add_argument("--budget", type=int, default=20, help="train questions to use (default 20)")
    tune.add_argument("--seed", type=int, default=0, help="seed of the question draw and demo sets (default 0)")
    tune.add_argument("--candidates", type=int, default=4, help="demo sets to compare, the prompt as it is "
                      "included (default 4)")
    tune.add_argument("--demos", type=int, default=2, help="demonstrations per set (default 2)")
    tune.add_argument("--held-out", type=float, default=0.35, help="share of the questions that judge the sets")
    tune.add_argument("--split", default="all", choices=SPLITS,
                      help="only the train questions of this split (eval/frames/split.py): tune or all; check "
                           "(the held-out questions) is refused")
    tune.add_argument("--work", default=None, help="work directory (default OUT.work)")
    tune.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    add_agent_flags(tune)
    tune.set_defaults(handler=run_tune_command)


def run_tune_command(args: argparse.Namespace) -> int:
    """Tune, write the prompt, and print what each candidate scored."""
    from dataclasses import asdict

    from frames_agent.agent.settings import AgentSettings
    from frames_agent.core.errors import UsageError
    from frames_agent.eval.frames.datasets import load_questions
    from frames_agent.eval.tune.runner import Tuner, TuneSettings

    if args.budget < 2 or args.candidates < 1 or args.demos < 0 or not 0 < args.held_out < 1:
        raise UsageError("tune needs --budget >= 2, --candidates >= 1, --demos >= 0 and 0 < --held-out < 1")
    settings = TuneSettings(prompt=args.prompt, budget=args.budget, seed=args.seed, candidates=args.candidates,
                            demos=args.demos, held_out=args.held_out)
    refuse_check(args.split, "tune")
    dataset = load_questions(args.train, split=args.split)
    agent = AgentSettings.from_flags(vars(args))
    base = agent.build_agent()
    if base.retriever is None:
        raise UsageError("tune searches the Wikipedia index: keep wiki in --tools")
    config = agent.config

    def make_agent(prompt_path: str):
        from frames_agent.agent.api import FramesAgent

        return FramesAgent(base.llm, base.retriever, base.tools, config.model_copy(update={"prompt": prompt_path}))

    work = Path(args.work) if args.work else Path(args.out + ".work")
    run_config = {"train": dataset.fingerprint, "model": args.model, "index": args.index, "tune": asdict(settings),
                  "agent": config.model_dump(), **({"split": args.split} if args.split != "all" else {})}
    outcome = Tuner(make_agent, base.retriever, settings, work, progress=args.progress).tune(dataset.questions, run_config)
    Path(args.out).write_text(outcome.text, encoding="utf-8")
    for i, chosen in enumerate(outcome.sets):
        mark = "*" if i == outcome.chosen else " "
        names = ", ".join(outcome.demos[j].question_id for j in chosen) or "(the prompt as it is)"
        print(f"{mark} set {i}: held-out recall {outcome.scores[i]:.3f}  demos: {names}")
    print(f"wrote {args.out} ({len(outcome.demos)} demonstrations bootstrapped; runs in {work})")
    print(json.dumps({"chosen": outcome.chosen, "scores": outcome.scores}))
    return 0
