"""The sweep executors: a retrieval-only sweep in this process and on a local Ray cluster, then a simulated 1 s LLM
on Ray clusters of 1 and N worker processes (target: T(N)/T(1) close to 1/N)."""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from frames_agent.eval.frames.executors import InProcess, RayCluster, ray_temp_dir  # noqa: E402
from frames_agent.eval.frames.runner import FramesRunSettings  # noqa: E402
from frames_agent.eval.sweep.grid import parse_grid  # noqa: E402
from frames_agent.eval.sweep.runner import plan_sweep, run_sweep  # noqa: E402
from frames_agent.retrieval.lucene.jvm import java_signals_kept  # noqa: E402

PLAN = {"thought": "look it up", "queries": ["Brennick mayor", "Port Alder"], "tool_calls": [], "enough": False}


def _script(path: Path, delay: float) -> str:
    path.write_text(json.dumps({"delay": delay, "rules": [["Reply with one JSON", PLAN], ["", "Answer: x"]]}))
    return str(path)


def _questions(home: Path, repeat: int) -> str:
    """The tiny FRAMES questions, `repeat` copies with their own ids."""
    source = ROOT / "tests" / "fixtures" / "frames_tiny.tsv"
    with source.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    out = home / f"questions-{repeat}.tsv"
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter="\t")
        writer.writerow(rows[0])
        for copy in range(repeat):
            for row in rows[1:]:
                writer.writerow([f"{copy * 100 + int(row[0])}", f"{row[1]} (copy {copy})", *row[2:]])
    return str(out)


def _index(name: str, home: Path) -> str:
    if name != "tiny":
        return name
    from frames_agent.index.build import build_index, make_spec
    from tests.conftest import TINY_CORPUS

    corpus = home / "tiny.jsonl"
    corpus.write_text("".join(json.dumps(doc) + "\n" for doc in TINY_CORPUS), encoding="utf-8")
    build_index(make_spec([corpus], unit="article"), home / "tiny-index", name="tiny", threads=1, progress=False)
    return str(home / "tiny-index")


def _timed(executor, home: Path, name: str, grid: list[str], data: str, index: str) -> float:
    from frames_agent.eval.frames.commands import build_components

    base = FramesRunSettings(data=data, index=index, model="openai:fake", judge="none", progress=False, no_cache=True,
                       retrieval_only=True, out=str(home / name))
    sweep = plan_sweep(base, parse_grid(grid))
    started = time.perf_counter()
    run_sweep(sweep, executor, build_components, lambda s: None)
    return time.perf_counter() - started


def _cluster(cpus: int, env: dict[str, str]) -> None:
    import ray

    with java_signals_kept():  # the in-process runs search Lucene in this driver: keep the JVM's signal handlers
        ray.shutdown()
        ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False,
                 _node_ip_address="127.0.0.1", _temp_dir=str(ray_temp_dir()), runtime_env={"env_vars": env})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default="tiny", help="tiny (built here), default, or an index directory")
    parser.add_argument("--repeat", type=int, default=10, help="copies of the 6 tiny questions per cell (part 1)")
    parser.add_argument("--workers", type=int, default=4, help="N worker processes for part 2")
    parser.add_argument("--slow-questions", type=int, default=1, help="copies of the 6 questions per cell (part 2)")
    args = parser.parse_args()
    import ray

    home = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    env = {"FRAMES_AGENT_TEST_SCRIPT": _script(home / "fast.json", 0.0), "FRAMES_AGENT_CACHE": str(home / "cache"),
           "PYTHONPATH": str(ROOT)}
    os.environ.update(env)
    index, data = _index(args.index, home), _questions(home, args.repeat)
    grid = ["k=1,2", "n=1,2"]
    _cluster(2, env)
    _timed(RayCluster(), home, "warm-ray", ["k=3,4"], _questions(home, 1), index)  # workers up, imports done
    _timed(InProcess(), home, "warm-local", ["k=3"], _questions(home, 1), index)
    local = _timed(InProcess(), home, "local", grid, data, index)
    remote = _timed(RayCluster(), home, "ray", grid, data, index)
    questions = 4 * 6 * args.repeat
    print(f"part 1: retrieval-only sweep, 4 cells × {6 * args.repeat} questions ({questions} question runs), "
          f"index {args.index}: in-process {local:.1f} s, Ray (2 CPUs, 127.0.0.1) {remote:.1f} s; "
          f"ratio ray/in-process {remote / local:.2f} (target <= 1.3)")

    env["FRAMES_AGENT_TEST_SCRIPT"] = _script(home / "slow.json", 1.0)
    os.environ.update(env)
    slow, times = _questions(home, args.slow_questions), {}
    for workers in (1, args.workers):
        _cluster(workers, env)
        _timed(RayCluster(), home, f"warm-{workers}", ["k=3"], _questions(home, 1), index)
        times[workers] = _timed(RayCluster(), home, f"slow-{workers}", ["k=1,2"], slow, index)
    with java_signals_kept():
        ray.shutdown()
    ratio = times[args.workers] / times[1]
    print(f"part 2: simulated 1 s LLM, 2 cells × {6 * args.slow_questions} questions × 5 plan calls: 1 worker "
          f"{times[1]:.1f} s, {args.workers} workers {times[args.workers]:.1f} s; ratio {ratio:.2f} "
          f"(ideal 1/{args.workers} = {1 / args.workers:.2f})")


if __name__ == "__main__":
    main()
