"""judge-check: the short-cuts are right on every shipped item they decide; agreement, kappa and confusion by hand."""
from __future__ import annotations

import json
from pathlib import Path

from frames_agent import cli
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.eval.frames.autorater import Autorater
from frames_agent.eval.frames.judgecheck import SHIPPED_LABELS, Labelled, check, load_labelled


def test_the_shortcuts_are_right_on_every_shipped_item_they_decide():
    items = load_labelled(SHIPPED_LABELS)
    report = check(items)
    assert report["n"] == len(items) >= 28 and report["shortcut_decided"] > 0
    assert report["shortcut_wrong"] == [] and report["shortcut_correct"] == report["shortcut_decided"]


def test_the_shortcuts_are_right_on_the_other_labelled_set_too():
    report = check(load_labelled(SHIPPED_LABELS.parent / "dev_labels.jsonl"))
    assert report["shortcut_decided"] > 0 and report["shortcut_wrong"] == []


def test_cli_without_a_judge_prints_one_json_object(capsys):
    assert cli.main(["judge-check", str(SHIPPED_LABELS), "--judge", "none", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {"n", "shortcut_decided", "shortcut_correct"} <= set(report) and "agreement" not in report


def test_agreement_kappa_and_confusion_by_hand():
    items = [Labelled(question="q", gold="Paris", prediction=p, label=label, kinds=kinds) for p, label, kinds in [
        ("Paris", True, []),  # exact: a short-cut, agrees
        ("the French capital, Paris, I believe", True, ["paraphrase", "hedge"]),  # judge says TRUE: agrees
        ("Lyon or Paris", False, ["hedge"]),  # judge says TRUE: disagrees (false positive)
        ("Marseille, not Paris", False, ["negation"]),  # judge says FALSE: agrees
    ]]
    replies = {"the French capital, Paris, I believe": "TRUE", "Lyon or Paris": "TRUE", "Marseille, not Paris": "FALSE"}
    judge = ScriptedLLM(responder=lambda m: "Decision: " + next(v for k, v in replies.items() if k in str(m[-1].content)))
    report = check(items, Autorater(judge, "scripted", strict=False))
    assert report["agreement"] == 0.75 and report["rated"] == 4 and report["judge_calls"] == 3
    assert report["confusion"] == {"true_positive": 2, "false_positive": 1, "false_negative": 0, "true_negative": 1}
    # observed 0.75; expected 0.75*0.5 + 0.25*0.5 = 0.5; kappa = (0.75 - 0.5) / 0.5
    assert report["kappa"] == 0.5 and report["disagreements"][0]["prediction"] == "Lyon or Paris"
    assert report["by_kind"]["hedge"] == {"n": 2, "labelled_correct": 1, "judge_agrees": 1}
    assert report["by_kind"]["plain"] == {"n": 1, "labelled_correct": 1, "judge_agrees": 1}


def test_a_bad_line_is_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "labels.jsonl"
    path.write_text('{"question": "q", "gold": "g", "prediction": "p"}\n')
    assert cli.main(["judge-check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "line 1" in err and len(err.strip().splitlines()) == 1


def test_reports_state_the_shipped_agreement_until_the_user_measures_their_own(tmp_path, monkeypatch):
    from frames_agent.eval.frames import judgecheck

    shipped, mine = tmp_path / "agreement.json", tmp_path / "cache" / "judge_agreement.json"
    shipped.write_text(json.dumps({"local:m": {"n": 120, "agreement": 0.9, "kappa": 0.5, "labels": "judge_check.jsonl",
                                               "judge_prompt": "frames"}}))
    monkeypatch.setattr(judgecheck, "SHIPPED_AGREEMENT", shipped)
    monkeypatch.setattr(judgecheck, "_agreement_file", lambda: mine)
    assert "120 hand-labelled answers" in judgecheck.agreement_note("local:m") and "90.0%" in judgecheck.agreement_note("local:m")
    assert "unknown" in judgecheck.agreement_note("local:other")
    judgecheck.remember({"judge": "local:m", "rated": 10, "agreement": 0.5, "kappa": None}, Path("x.jsonl"), "frames")
    assert "10 hand-labelled answers" in judgecheck.agreement_note("local:m")
