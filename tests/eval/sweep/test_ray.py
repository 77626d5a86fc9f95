"""The Ray executor on a local cluster started here (127.0.0.1, 2 CPUs): the same sweep as in-process, a killed
worker retried or recorded as failed, never lost or duplicated; `frames --executor ray` too."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")

from frames_agent import cli  # noqa: E402
from frames_agent.eval.frames.executors import RayCluster  # noqa: E402
from frames_agent.eval.frames.runner import FramesRunSettings  # noqa: E402
from frames_agent.eval.sweep.grid import parse_grid  # noqa: E402
from frames_agent.eval.sweep.runner import plan_sweep, run_sweep  # noqa: E402
from frames_agent.retrieval.lucene.jvm import java_signals_kept  # noqa: E402
from tests.eval.frames.test_runner import TINY  # noqa: E402
from tests.eval.sweep.helpers import build_kill_always, build_kill_once, results, sweep_args, write_script  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]  # a Ray cluster: one at a time across workers

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def own_temp(monkeypatch):
    """A short temporary directory of this test's own as TMPDIR (Ray's sockets must fit in 107 bytes)."""
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="fa-ray-", dir="/tmp"))
    monkeypatch.setenv("TMPDIR", str(path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One local Ray cluster for the module, on 127.0.0.1 in a temporary directory of its own (another Ray user of
    the machine shares /tmp/ray, never this); workers get the scripted model and this checkout on their path."""
    import shutil
    import tempfile

    home = tmp_path_factory.mktemp("ray")
    own = tempfile.mkdtemp(prefix="fa-ray-", dir="/tmp")
    # Workers import frames_agent from where this process did (a checkout's parent, or a link to it), not from
    # whichever install a bare interpreter would find.
    package_parent = str(Path(cli.__file__).parent.parent)
    env = {"FRAMES_AGENT_TEST_SCRIPT": str(write_script(home / "script.json")),
           "FRAMES_AGENT_CACHE": str(home / "cache"), "PYTHONPATH": os.pathsep.join([package_parent, str(ROOT)])}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the driver builds nothing, but `cli.main` reads the same variables
    with java_signals_kept():  # other tests search Lucene in this process: Ray must not take the JVM's signals
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
                 _node_ip_address="127.0.0.1", _temp_dir=own, runtime_env={"env_vars": env})
    yield home
    with java_signals_kept():
        ray.shutdown()
    shutil.rmtree(own, ignore_errors=True)
    for key, value in saved.items():
        os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)


def _recalls(out: Path) -> dict[str, dict[str, float]]:
    return {cell.name: {r["id"]: r["recall"] for r in results(cell)} for cell in sorted(out.iterdir())
            if (cell / "results.jsonl").exists()}


def test_ray_sweep_matches_the_in_process_sweep(cluster, tiny_index, capsys):
    grid = ["--grid", "k=1,2", "--grid", "n=1,2", "--retrieval-only", "--limit", "4"]
    assert cli.main(sweep_args(tiny_index, cluster / "local", *grid)) == 0
    assert cli.main(sweep_args(tiny_index, cluster / "ray", *grid, "--executor", "ray")) == 0
    assert _recalls(cluster / "ray") == _recalls(cluster / "local") and len(_recalls(cluster / "ray")) == 4
    assert (cluster / "ray" / "heatmap.png").exists() and (cluster / "ray" / "recall_overlay.png").exists()
    capsys.readouterr()
    assert cli.main(sweep_args(tiny_index, cluster / "ray", *grid, "--executor", "ray")) == 0  # all done: no task
    assert all(len(results(cluster / "ray" / c)) == 4 for c in _recalls(cluster / "ray"))


def _sweep(cluster: Path, index: Path, name: str, build, retries: int):
    base = FramesRunSettings(data=TINY, limit=3, index=str(index), model="openai:fake", judge="none", progress=False,
                       no_cache=True, retrieval_only=True, out=str(cluster / name))
    sweep = plan_sweep(base, parse_grid(["k=1,2"]))
    return sweep, run_sweep(sweep, RayCluster(max_retries=retries), build, lambda s: None)


def test_the_cluster_keeps_its_sessions_in_its_own_temporary_directory(cluster):
    from ray._private.worker import global_worker

    session = Path(global_worker.node.get_session_dir_path())
    assert session.parent.name.startswith("fa-ray-") and not str(session).startswith("/tmp/ray/")


def test_a_killed_worker_is_retried_and_its_question_recorded_once(cluster, tiny_index):
    sweep, outcomes = _sweep(cluster, tiny_index, "once", build_kill_once, retries=2)
    assert (sweep.root / "killed").exists()  # a worker did die
    for outcome in outcomes:
        ids = [r["id"] for r in results(outcome.out)]
        assert sorted(ids) == ["0", "1", "2"] and outcome.summary.failed == 0


def test_a_worker_that_always_dies_leaves_a_failed_record_and_resume_adds_nothing(cluster, tiny_index):
    sweep, outcomes = _sweep(cluster, tiny_index, "always", build_kill_always, retries=1)
    for outcome in outcomes:
        lines = results(outcome.out)
        assert sorted(r["id"] for r in lines) == ["0", "1", "2"]
        failed = [r for r in lines if r["failed"]]
        assert [r["id"] for r in failed] == ["1"] and "Ray task lost after 1 retries" in failed[0]["error"]
    _, again = _sweep(cluster, tiny_index, "always", build_kill_always, retries=1)
    assert [o.ran for o in again] == [0, 0] and all(len(results(o.out)) == 3 for o in again)


def test_frames_and_compare_take_the_ray_executor(cluster, tiny_index, capsys):
    common = ["--index", str(tiny_index), "--data", TINY, "--model", "openai:fake", "--judge", "none", "--limit", "2",
              "--k", "1", "--n", "1", "--no-progress", "--no-cache", "--executor", "ray"]
    assert cli.main(["frames", *common, "--out", str(cluster / "frames")]) == 0
    summary = json.loads((cluster / "frames" / "summary.json").read_text())
    assert summary["n"] == 2 and summary["failed"] == 0 and summary["exact_matches"] == 1  # question 0: the mayor
    assert cli.main(["compare", "--prompts", "vanilla", "planning", *common, "--out", str(cluster / "cmp")]) == 0
    assert "planning vs vanilla" in capsys.readouterr().out


def test_sigterm_to_a_ray_sweep_exits_143_cleanly_and_resume_finishes(tmp_path, tiny_index, own_temp):
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "sweep"
    env = {**os.environ, "FRAMES_AGENT_TEST_SCRIPT": str(write_script(tmp_path / "script.json", delay=1.0)),
           "FRAMES_AGENT_CACHE": str(tmp_path / "cache"), "RAY_ADDRESS": ""}  # TMPDIR: own_temp's
    argv = [sys.executable, "cli.py", *sweep_args(tiny_index, out, "--grid", "k=1,2", "--n", "1", "--executor", "ray",
                                                  "--limit", "4")]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if any((cell / "results.jsonl").exists() and (cell / "results.jsonl").read_text() for cell in out.glob("k=*")):
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-3000:]
    assert err.strip().splitlines()[-1].startswith("terminated; finished work is saved"), err[-3000:]
    assert not any(word in err for word in ("Traceback", "Aborted", "core dumped", "*** SIG", "Check failed")), err
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert list((own_temp / f"frames-agent-ray-{os.getuid()}").glob("session_*"))  # not /tmp/ray
    for cell in ("k=1", "k=2"):
        assert sorted(r["id"] for r in results(out / cell)) == ["0", "1", "2", "3"]  # each once: nothing lost
