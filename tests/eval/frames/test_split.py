"""The honest split: a stable hash of each question's text puts it in tune (~60%) or check (~40%); frames records
and checks it, tune refuses check."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from frames_agent import cli
from frames_agent.core.errors import FramesAgentError, UsageError
from frames_agent.eval.frames.datasets import default_data, load_questions
from frames_agent.eval.frames.runner import FramesRunSettings, default_out
from frames_agent.eval.frames.split import refuse_check, select, split_of
from tests.eval.frames.test_runner import TINY, run

ROOT = Path(__file__).resolve().parents[3]
# The tiny fixture's six questions: one on the tune side.
TINY_SPLIT = {"0": "check", "1": "check", "2": "check", "3": "tune", "4": "check", "5": "check"}


def test_the_split_is_a_hash_of_the_normalised_question_text():
    question = "Who is the mayor of the city where Marta Kowalczyk was born?"
    assert split_of(question) == split_of("  who is THE mayor of the city\twhere Marta Kowalczyk was born? ")
    assert {split_of(f"question {i}") for i in range(50)} == {"tune", "check"}


@pytest.mark.slow
def test_the_split_is_the_same_in_another_process_with_another_hash_seed():
    texts = [f"Which river flows through city number {i}?" for i in range(40)]
    code = ("import json, sys\nfrom eval.frames.split import split_of\n"
            "print(json.dumps([split_of(t) for t in json.loads(sys.argv[1])]))")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(texts)], cwd=ROOT, capture_output=True, text=True,
                          env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"}, check=True, timeout=120)
    assert json.loads(done.stdout) == [split_of(t) for t in texts]


def test_file_order_and_ids_do_not_move_a_question(tmp_path):
    lines = Path(TINY).read_text(encoding="utf-8").splitlines()
    shuffled = [lines[0], *random.Random(3).sample(lines[1:], len(lines) - 1)]
    renumbered = [shuffled[0], *("9" + row for row in shuffled[1:])]  # other ids, other order
    (tmp_path / "other.tsv").write_text("\n".join(renumbered) + "\n", encoding="utf-8")
    before = {q.prompt for q in load_questions(TINY, split="tune").questions}
    after = {q.prompt for q in load_questions(tmp_path / "other.tsv", split="tune").questions}
    assert before == after and len(before) == 1
    assert {q.id: split_of(q.prompt) for q in load_questions(TINY).questions} == TINY_SPLIT


@pytest.mark.skipif(not Path(default_data()).exists(), reason="the shared dev split is not here")
def test_the_dev_split_is_about_sixty_forty():
    questions = load_questions(default_data()).questions
    tune, check = select(questions, "tune"), select(questions, "check")
    assert len(questions) == 327 and len(tune) + len(check) == 327
    assert 0.55 < len(tune) / 327 < 0.65 and (len(tune), len(check)) == (199, 128)
    assert [q.id for q in load_questions(default_data(), limit=5, split="check").questions] == [q.id for q in check[:5]]


def test_frames_records_the_split_and_refuses_another_on_resume(tmp_path, tiny_retriever):
    outcome, _ = run(tmp_path, tiny_retriever, split="tune")
    assert outcome.summary.n == 1 and json.loads((outcome.out / "config.json").read_text())["split"] == "tune"
    with pytest.raises(FramesAgentError, match=r"\(split was 'tune', now 'check'\)"):
        run(tmp_path, tiny_retriever, split="check")
    assert default_out(FramesRunSettings(split="check")).name.endswith("-check")


def test_a_run_recorded_before_the_split_and_new_fields_resumes_at_their_defaults(tmp_path, tiny_retriever):
    run(tmp_path, tiny_retriever, limit=2)
    path = tmp_path / "run" / "config.json"
    config = json.loads(path.read_text())
    del config["split"], config["agent"]["question_docs"], config["agent"]["plan_thought_chars"]
    path.write_text(json.dumps(config))
    more, _ = run(tmp_path, tiny_retriever, limit=3)
    assert more.ran == 1
    config = json.loads(path.read_text())
    del config["split"]
    path.write_text(json.dumps(config))
    with pytest.raises(FramesAgentError, match=r"\(split was None, now 'tune'\)"):
        run(tmp_path, tiny_retriever, split="tune")


def test_a_run_recorded_before_a_default_that_changed_behaviour_resumes_only_with_the_old_behaviour(
        tmp_path, tiny_retriever):
    from frames_agent.agent.config import AgentConfig
    from frames_agent.eval.frames.runner import run_frames
    from tests.eval.frames.test_runner import builder, settings

    def resume(**agent):
        s = settings(tmp_path, limit=3)
        return run_frames(s, AgentConfig(k=s.k, n=s.n, n_docs=s.n_docs, prompt=s.prompt, **agent),
                          build=builder(tiny_retriever), echo=lambda line: None)

    run(tmp_path, tiny_retriever, limit=2)
    path = tmp_path / "run" / "config.json"
    config = json.loads(path.read_text())
    del config["agent"]["repeat_docs"]  # recorded before repeats were searched deeper: they were dropped
    path.write_text(json.dumps(config))
    with pytest.raises(FramesAgentError, match=r"\(agent.repeat_docs was None, now 3\)"):
        resume()
    assert resume(repeat_docs=0).ran == 1


def test_a_run_recorded_with_a_retired_setting_resumes_only_at_the_value_that_does_what_the_agent_does(
        tmp_path, tiny_retriever, capsys):
    run(tmp_path, tiny_retriever, limit=2)
    path = tmp_path / "run" / "config.json"
    config = json.loads(path.read_text())
    path.write_text(json.dumps({**config, "agent": {**config["agent"], "drop_fanout": False, "max_articles": None}}))
    assert run(tmp_path, tiny_retriever, limit=3)[0].ran == 1
    path.write_text(json.dumps({**config, "agent": {**config["agent"], "proposer_rank": "specificity"}}))
    with pytest.raises(FramesAgentError, match=r"was run with proposer_rank=\"specificity\": a retired setting "
                       r"\(tried and not kept: docs/measurements.md#tried-and-not-kept\)") as caught:
        run(tmp_path, tiny_retriever, limit=4)
    assert "\n" not in str(caught.value)


def test_tuning_refuses_the_check_questions_in_one_line(tmp_path, capsys):
    argv = ["tune", "--train", TINY, "--out", str(tmp_path / "p.txt"), "--split", "check"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "refuses --split check" in err and err.count("\n") == 1
    with pytest.raises(UsageError, match="--report-only"):
        refuse_check("check", "bench/replay_retrieval.py")
    refuse_check("check", "bench/replay_retrieval.py", report_only=True)
    refuse_check("tune", "tune")
