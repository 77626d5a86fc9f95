"""The runner end to end on the tiny real index with ScriptedLLM: systems, resume, config refusal, reports, CLI."""
from __future__ import annotations

import asyncio
import json
import re
import signal
from pathlib import Path
from types import SimpleNamespace

import pytest

from frames_agent import cli
from frames_agent.agent.api import FramesAgent
from frames_agent.agent.config import AgentConfig
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.core.errors import FramesAgentError
from frames_agent.eval.frames.autorater import Autorater
from frames_agent.eval.frames.runner import Components, FramesRunSettings, run_frames
from frames_agent.eval.frames.systems import (
    CoverageChecker,
    Naive,
    Oracle,
    WikipediaFetcher,
    make_system,
)

TINY = str(Path(__file__).parents[2] / "fixtures" / "frames_tiny.tsv")
# question id -> (a distinctive phrase, queries per step, the model's answer); 0, 1, 4 exact; 5 needs the judge
SCRIPT = {
    "0": ("Marta Kowalczyk was born", [["Marta Kowalczyk"], ["Brennick mayor", "Tomas Ferrante"]], "Tomas Ferrante"),
    "1": ("stadium of the football club", [["Tomas Ferrante", "Port Alder"], ["Kestrel Valley FC", "Gannet Park"]],
          "It opened in 1962"),
    "2": ("Punxsutawney Phil observed", [["Punxsutawney Phil"], ["Groundhog Day"]], "February 3"),
    "3": ("award that Marta Kowalczyk", [["Marta Kowalczyk"], ["Halvorsen Prize"]], "Erik Halvorson"),
    "4": ("river that flows through", [["Olse River"], ["Brennick river"]], "410"),
    "5": ("telescope was installed", [["Brennick Observatory"], ["Lindqvist refractor"]], "the Lindqvist telescope"),
}
JUDGE_TRUE = {"the Lindqvist telescope"}


def _qid(text: str) -> str:
    return next(qid for qid, (phrase, _, _) in SCRIPT.items() if phrase in text)


def responder(messages) -> str | dict:
    text = str(messages[-1].content)
    if "Now grade this one." in text or "===Task===" in text:
        response = re.findall(r"^(?:Response|- Predicted Answer): (.*)$", text, re.MULTILINE)[-1]
        return f"Explanation: compared.\nDecision: {'TRUE' if response in JUDGE_TRUE else 'FALSE'}"
    step = re.search(r"Step (\d+) of \d+", text)
    if step:
        queries = SCRIPT[_qid(text)][1]
        return {"thought": "next", "queries": queries[min(int(step.group(1)), len(queries)) - 1]}
    return f"The documents say so.\nAnswer: {SCRIPT[_qid(text)][2]}"


def make_agent(retriever, llm=None, **config) -> FramesAgent:
    cfg = AgentConfig(**{"k": 2, "n": 2, "n_docs": 3, **config})
    return FramesAgent(llm or ScriptedLLM(responder=responder), retriever, config=cfg)


def settings(tmp_path, **overrides) -> FramesRunSettings:
    values = {"k": 2, "n": 2, "n_docs": 3, "data": TINY, "out": str(tmp_path / "run"), "model": "scripted",
              "concurrency": 3, "progress": False, **overrides}
    return FramesRunSettings(**values)


def builder(retriever, *, wrap=None, judge2=False, fetcher=None, llm=None):
    """A build() for run_frames: the named system over a scripted agent on the tiny index (llm(scripted) may wrap
    its model, e.g. in the call cache)."""
    def build(s: FramesRunSettings, config: AgentConfig) -> Components:
        scripted = ScriptedLLM(responder=responder)
        agent = FramesAgent(llm(scripted) if llm else scripted, retriever, config=config)
        system = make_system(s.system, agent, n_docs=config.n_docs, fetcher=fetcher)
        rater = Autorater(None, "none") if s.judge == "none" else Autorater(agent.llm, "scripted")
        return Components(system=wrap(system) if wrap else system, coverage=CoverageChecker(retriever),
                          rater=None if s.retrieval_only else rater,
                          rater2=Autorater(ScriptedLLM(responder=lambda m: "Decision: TRUE"), "yes-man") if judge2 else None)
    return build


def run(tmp_path, retriever, echo=None, build=None, **overrides):
    s = settings(tmp_path, **overrides)
    lines = []
    outcome = run_frames(s, AgentConfig(k=s.k, n=s.n, n_docs=s.n_docs, prompt=s.prompt),
                         build=build or builder(retriever), echo=echo or lines.append)
    return outcome, lines


def read_results(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


# --- the whole run ----------------------------------------------------------------------------------------------
def test_multistep_run_writes_results_summary_report_and_plots(tmp_path, tiny_retriever):
    outcome, lines = run(tmp_path, tiny_retriever)
    s, out = outcome.summary, outcome.out
    assert outcome.ran == 6 and s.n == 6 and s.failed == 0
    assert s.accuracy == pytest.approx(4 / 6)  # 0, 1, 4 exact; 5 by the judge
    assert s.verdicts == {"exact": 3, "judge": 3}
    # 16 gold articles, Pennsylvania and Oslund are not in the tiny index
    assert s.coverage == pytest.approx(14 / 16) and s.fully_covered == 4 and s.gold_articles == 16
    assert len(s.recall_by_step) == 2 and s.recall_by_step[0] <= s.recall_by_step[1]
    assert s.covered_recall >= s.recall
    assert s.calls == 6 * 3 and s.judge_calls == 3
    records = {r["id"]: r for r in read_results(out)}
    assert records["2"]["covered_titles"] == ["Punxsutawney Phil", "Groundhog Day"]
    assert records["2"]["recall"] == pytest.approx(2 / 3) and records["2"]["covered_recall"] == 1.0
    assert records["5"]["verdict"]["method"] == "judge" and records["5"]["correct"] is True
    # What a replay needs to rebuild each step: the hits each query returned and a repeat's own depth.
    assert all({"query_hits", "query_depths", "origins"} <= set(step) for r in records.values() for step in r["steps"])
    assert json.loads((out / "summary.json").read_text())["accuracy"] == pytest.approx(4 / 6)
    report = (out / "report.md").read_text()
    assert "coverage 87.5%" in report and "accuracy_by_type.png" in report and "recall_by_step.png" in report
    assert (out / "accuracy_by_type.png").stat().st_size > 1000 and (out / "recall_by_step.png").exists()
    assert any("0 already done" in line for line in lines)


def test_rerun_of_a_finished_run_runs_nothing(tmp_path, tiny_retriever):
    run(tmp_path, tiny_retriever)
    outcome, lines = run(tmp_path, tiny_retriever, build=lambda *a: pytest.fail("nothing should be built"))
    assert outcome.ran == 0 and outcome.summary.n == 6 and any("6 already done" in line for line in lines)


class Interrupting:
    """Wraps a system: counts runs and sends a real SIGINT (Ctrl-C) when the run after `after` starts."""

    def __init__(self, system, after: int | None, seen: list):
        self.inner, self.after, self.seen, self.name = system, after, seen, system.name

    async def run(self, question, answer=True):
        if self.after is not None and len(self.seen) >= self.after:
            signal.raise_signal(signal.SIGINT)  # asyncio.run cancels the run, then raises KeyboardInterrupt
            await asyncio.sleep(30)
        self.seen.append(question.id)
        return await self.inner.run(question, answer)


@pytest.mark.parametrize("concurrency", [1, 3])
def test_resume_after_kill_and_torn_line_loses_nothing_and_repeats_nothing(tmp_path, tiny_retriever, concurrency):
    # As in a terminal: a shell starting pytest in the background (`cmd &`, no job control) leaves SIGINT ignored,
    # and Python then never installs its KeyboardInterrupt handler.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _resume_after_kill(tmp_path, tiny_retriever, concurrency)
    finally:
        signal.signal(signal.SIGINT, previous)


def _resume_after_kill(tmp_path, tiny_retriever, concurrency):
    first: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, tiny_retriever, concurrency=concurrency,
            build=builder(tiny_retriever, wrap=lambda s: Interrupting(s, 3, first)))
    out = tmp_path / "run"
    finished = [r["id"] for r in read_results(out)]
    assert len(finished) == len(set(finished)) and set(finished) <= set(first) and len(finished) >= 1
    assert json.loads((out / "summary.json").read_text())["n"] == len(finished)  # written even after the kill
    with (out / "results.jsonl").open("a") as handle:  # a line torn by the kill
        handle.write('{"id": "5", "question": "Which tel')
    second: list[str] = []
    outcome, lines = run(tmp_path, tiny_retriever, concurrency=concurrency,
                         build=builder(tiny_retriever, wrap=lambda s: Interrupting(s, None, second)))
    assert sorted(second) == sorted(set("012345") - set(finished))
    ids = [r["id"] for r in read_results(out)]
    assert sorted(ids) == list("012345") and outcome.summary.n == 6
    assert any("dropped the last line" in line for line in lines)


def test_a_failing_question_is_recorded_and_the_run_goes_on(tmp_path, tiny_retriever):
    class Failing:
        def __init__(self, system):
            self.inner, self.name = system, system.name

        async def run(self, question, answer=True):
            if question.id == "2":
                raise FramesAgentError("retrieval failed at step 1: index gone\nsecond line")
            return await self.inner.run(question, answer)

    outcome, _ = run(tmp_path, tiny_retriever, build=builder(tiny_retriever, wrap=Failing))
    assert outcome.summary.n == 6 and outcome.summary.failed == 1
    assert outcome.summary.failures == [{"id": "2", "error": "FramesAgentError: retrieval failed at step 1: index gone"}]
    assert "## Failed questions" in (outcome.out / "report.md").read_text()
    again, _ = run(tmp_path, tiny_retriever, retry_failed=True)
    assert again.ran == 1 and again.summary.failed == 0 and again.summary.n == 6


def test_config_mismatch_is_refused_naming_the_field(tmp_path, tiny_retriever):
    run(tmp_path, tiny_retriever, limit=1)
    with pytest.raises(FramesAgentError, match=r"different configuration \(agent\.k was 2, now 3\)"):
        run(tmp_path, tiny_retriever, k=3)
    with pytest.raises(FramesAgentError, match=r"\(system was 'multistep', now 'bm25'\)"):
        run(tmp_path, tiny_retriever, system="bm25")
    more, _ = run(tmp_path, tiny_retriever, limit=3, concurrency=1)  # limit and concurrency may change
    assert more.ran == 2 and more.summary.n == 3
    copy = tmp_path / "copy.tsv"
    copy.write_bytes(Path(TINY).read_bytes())
    moved, _ = run(tmp_path, tiny_retriever, limit=3, data=str(copy))  # same questions from another path
    assert moved.ran == 0
    copy.write_text(Path(TINY).read_text().replace("1962", "1963"))
    with pytest.raises(FramesAgentError, match=r"\(data_fingerprint was 'sha256:"):
        run(tmp_path, tiny_retriever, data=str(copy))


def test_cli_refuses_mixed_config_with_one_line(tmp_path, tiny_retriever, capsys):
    run(tmp_path, tiny_retriever, limit=1)
    code = cli.main(["frames", "--data", TINY, "--out", str(tmp_path / "run"), "--model", "scripted", "--k", "4",
                     "--n", "2", "--n-docs", "3"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "agent.k was 2, now 4" in err and err.count("\n") == 1


def test_cli_set_reaches_the_run_config(tmp_path, tiny_retriever, monkeypatch):
    monkeypatch.setattr("frames_agent.eval.frames.commands.build_components", builder(tiny_retriever))
    code = cli.main(["frames", "--data", TINY, "--out", str(tmp_path / "run"), "--model", "scripted", "--k", "2",
                     "--n", "2", "--n-docs", "3", "--limit", "1", "--no-progress", "--retrieval-only",
                     "--set", "question_docs=7", "--set", "propose_queries=false"])
    agent = json.loads((tmp_path / "run" / "config.json").read_text())["agent"]
    assert code == 0 and agent["question_docs"] == 7 and agent["propose_queries"] is False


@pytest.mark.lucene  # frames checks its optional packages before its data
def test_cli_bad_data_is_one_line(tmp_path, capsys):
    code = cli.main(["frames", "--data", str(tmp_path / "nope.tsv"), "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and "no data file at" in err and err.count("\n") == 1
    assert "--data hf:google/frames-benchmark" in err  # the route for machines without the shared data


# --- systems ----------------------------------------------------------------------------------------------------
def test_retrieval_only_multistep_makes_no_answer_or_judge_calls(tmp_path, tiny_retriever):
    outcome, _ = run(tmp_path, tiny_retriever, retrieval_only=True)
    s = outcome.summary
    assert s.accuracy is None and s.calls == 6 * 2 and s.judge_calls == 0 and s.recall > 0.5
    assert all(r["correct"] is None and r["answer"] == "" for r in read_results(outcome.out))
    assert "retrieval only" in (outcome.out / "report.md").read_text()


def test_bm25_system_searches_the_question_once(tmp_path, tiny_retriever):
    outcome, _ = run(tmp_path, tiny_retriever, system="bm25")
    records = read_results(outcome.out)
    assert all(r["llm_calls"] == 1 and len(r["steps"]) == 1 and r["steps"][0]["new_docs"] <= 3 for r in records)
    assert outcome.summary.recall_by_step == [outcome.summary.recall]
    retrieval_only, lines = run(tmp_path, tiny_retriever, system="bm25", retrieval_only=True, out=str(tmp_path / "r2"),
                                model="local:qwen2.5-coder-1.5b")
    assert retrieval_only.summary.calls == 0 and retrieval_only.summary.recall == outcome.summary.recall
    estimate = next(line for line in lines if line.startswith("estimate:"))
    assert "no LLM calls" in estimate and "qwen" not in estimate


def test_naive_system_uses_no_documents(tmp_path, tiny_retriever):
    outcome, _ = run(tmp_path, tiny_retriever, system="naive")
    records = read_results(outcome.out)
    assert all(r["retrieved_titles"] == [] and r["llm_calls"] == 1 for r in records)
    assert outcome.summary.recall == 0.0 and outcome.summary.accuracy == pytest.approx(4 / 6)



def test_naive_answer_prompt_has_no_documents(tiny_retriever):
    import asyncio

    from frames_agent.eval.frames.datasets import load_questions

    llm = ScriptedLLM(responder=responder)
    question = load_questions(TINY).questions[0]
    output = asyncio.run(Naive(make_agent(tiny_retriever, llm)).run(question))
    assert output.result.answer == "Tomas Ferrante" and "(no documents)" in llm.prompts[0]


class FakeWikipedia:
    def __init__(self, error: Exception | None = None):
        self.error, self.asked = error, []

    def __call__(self, title: str) -> tuple[str, str]:
        self.asked.append(title)
        if self.error:
            raise self.error
        return title, f"{title} is a place in the fake Wikipedia."


def test_oracle_offline_reports_missing_gold_articles(tmp_path, tiny_retriever):
    import requests

    fake = FakeWikipedia(requests.exceptions.ConnectionError("no network"))
    fetcher = WikipediaFetcher(tmp_path / "wiki", fetch=fake)
    outcome, _ = run(tmp_path, tiny_retriever, system="oracle", build=builder(tiny_retriever, fetcher=fetcher))
    records = {r["id"]: r for r in read_results(outcome.out)}
    assert records["2"]["oracle"]["found"] == ["Punxsutawney Phil", "Groundhog Day"]
    assert records["2"]["oracle"]["missing"] == ["Pennsylvania"]
    assert "offline" in records["2"]["oracle"]["reasons"]["Pennsylvania"]
    assert records["3"]["oracle"]["missing"] == ["Oslund"]
    assert len(fake.asked) == 1  # after one failed connection the fetcher stops trying
    assert records["0"]["recall"] == 1.0 and records["2"]["recall"] == pytest.approx(2 / 3)
    assert outcome.summary.recall_by_step == []


def test_records_and_report_say_which_passages_of_the_gold_articles_the_answer_saw(tmp_path, tiny_retriever):
    fetcher = WikipediaFetcher(tmp_path / "wiki", online=False)
    outcome, _ = run(tmp_path, tiny_retriever, system="oracle", build=builder(tiny_retriever, fetcher=fetcher))
    records = {r["id"]: r for r in read_results(outcome.out)}
    shown = records["0"]["answer_context"]["passages"]
    assert {p["title"] for p in shown} == set(records["0"]["covered_titles"])
    assert all(p["passages"] and p["tokens"] > 0 and p["article_tokens"] > 0 for p in shown)
    assert records["0"]["final"]["format_ok"] and records["0"]["final"]["reasoning"] == "The documents say so."
    record = records["0"]
    assert record["gold_shown"] == record["covered_titles"] and record["answer_context_recall"] == 1.0
    assert record["answer_in_prompt"] == (record["gold_answer"].lower() in record["answer_context"]["text"].lower())
    report = (outcome.out / "report.md").read_text()
    assert "## What the answer could see" in report and "share of each shown gold article" in report
    assert "Answer-context recall" in report and "reader failures" in report
    summary = json.loads((outcome.out / "summary.json").read_text())
    assert summary["answer_context_recall"] == 1.0 and summary["answer_in_prompt"] is not None


def test_oracle_online_fetches_once_and_caches_on_disk(tmp_path, tiny_retriever):
    import asyncio

    from frames_agent.eval.frames.datasets import load_questions

    fake = FakeWikipedia()
    question = load_questions(TINY).questions[2]
    oracle = Oracle(make_agent(tiny_retriever), tiny_retriever, WikipediaFetcher(tmp_path / "wiki", fetch=fake))
    output = asyncio.run(oracle.run(question))
    assert output.oracle["fetched"] == ["Pennsylvania"] and output.oracle["missing"] == []
    assert "Pennsylvania" in [d.title for d in output.result.documents]
    offline = WikipediaFetcher(tmp_path / "wiki", online=False, fetch=FakeWikipedia(RuntimeError("unused")))
    doc, why = offline.get("pennsylvania")
    assert doc is not None and why is None and fake.asked == ["Pennsylvania"]


def test_unknown_system_and_bm25_without_index():
    agent = make_agent(None)
    with pytest.raises(FramesAgentError, match="unknown --system 'magic'"):
        make_system("magic", agent, n_docs=3)
    with pytest.raises(FramesAgentError, match="needs a Wikipedia index"):
        make_system("bm25", agent, n_docs=3)


def test_naive_retrieval_only_is_refused(tmp_path, tiny_retriever):
    with pytest.raises(FramesAgentError, match="nothing to measure"):
        run(tmp_path, tiny_retriever, system="naive", retrieval_only=True)


# --- judging ----------------------------------------------------------------------------------------------------
def test_judge_none_leaves_non_exact_answers_unrated_and_rejudge_rates_them(tmp_path, tiny_retriever, capsys,
                                                                             monkeypatch):
    outcome, _ = run(tmp_path, tiny_retriever, judge="none")
    s = outcome.summary
    # 0, 1, 4 are exact; "the Lindqvist telescope" (5, right) and 2, 3 (wrong) are unrated, never wrong
    assert (s.rated, s.unrated, s.exact_matches, s.accuracy, s.judge_calls) == (3, 3, 3, 1.0, 0)
    records = {r["id"]: r for r in read_results(outcome.out)}
    assert records["5"]["verdict"]["outcome"] == "unrated" and records["5"]["correct"] is None
    saved = json.loads((outcome.out / "summary.json").read_text())
    assert (saved["rated"], saved["unrated"]) == (3, 3)
    report = (outcome.out / "report.md").read_text()
    assert "exact-match rate (lower bound) 50.0% (3/6)" in report and "3 answer(s) unrated" in report
    assert "| 5 | unrated |" in report
    assert cli.main(["report", str(outcome.out)]) == 0
    line = capsys.readouterr().out
    assert "exact-match rate (lower bound) 50.0% (3/6), accuracy 100.0% over 3 rated of 6, 3 unrated" in line
    assert "| accuracy 50.0%" not in line

    judge = ScriptedLLM(responder=responder)
    monkeypatch.setattr("frames_agent.agent.llm.resolve_model", lambda spec, **kw: judge)
    assert cli.main(["rejudge", str(outcome.out), "--judge", "scripted-judge"]) == 0
    assert "accuracy 66.7% (4/6)" in capsys.readouterr().out and len(judge.calls) == 3
    s = json.loads((outcome.out / "summary.json").read_text())
    assert (s["rated"], s["unrated"], s["accuracy"]) == (6, 0, pytest.approx(4 / 6))
    assert "rejudged by scripted-judge" in s["judge"]
    assert cli.main(["rejudge", str(outcome.out), "--judge", "scripted-judge"]) == 0  # nothing left to rate
    assert len(judge.calls) == 3 and "0 unrated answer(s)" in capsys.readouterr().err
    again, _ = run(tmp_path, tiny_retriever, judge="none")  # the run itself still resumes with its own config
    assert again.ran == 0 and again.summary.unrated == 0 and "rejudged by scripted-judge" in again.summary.judge


def test_rejudge_refuses_no_judge_and_a_non_run(tmp_path, capsys):
    assert cli.main(["rejudge", str(tmp_path), "--judge", "none"]) == 2
    assert "needs a judge model" in capsys.readouterr().err
    assert cli.main(["rejudge", str(tmp_path), "--judge", "x:y"]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_second_judge_agreement(tmp_path, tiny_retriever):
    outcome, _ = run(tmp_path, tiny_retriever, judge2="yes-man", build=builder(tiny_retriever, judge2=True))
    agree = outcome.summary.judge_agreement
    # exact matches (0, 1, 4) agree; on 2, 3 the first judge says FALSE and the yes-man TRUE; on 5 both TRUE
    assert agree["n"] == 6 and agree["agreement"] == pytest.approx(4 / 6)
    assert "Cohen's kappa" in (outcome.out / "report.md").read_text()


# --- report and compare -----------------------------------------------------------------------------------------
def test_report_command_rerenders_and_compares(tmp_path, tiny_retriever, capsys):
    run(tmp_path, tiny_retriever, out=str(tmp_path / "a"))
    run(tmp_path, tiny_retriever, out=str(tmp_path / "b"), system="naive")
    (tmp_path / "a" / "report.md").unlink()
    code = cli.main(["report", str(tmp_path / "a"), str(tmp_path / "b")])
    out = capsys.readouterr().out
    assert code == 0 and (tmp_path / "a" / "report.md").exists()
    assert "accuracy 66.7% (4/6)" in out and "McNemar exact p = 1" in out and "not distinguishable" in out
    # With --out the comparison goes there; the runs' own report.md and summary.json are read, never rewritten.
    own = {p: p.stat().st_mtime_ns for run in ("a", "b") for p in (tmp_path / run).iterdir()
           if p.is_file() and p.name != ".lock"}
    assert cli.main(["report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "cmp-out")]) == 0
    assert {p: p.stat().st_mtime_ns for p in own} == own and (tmp_path / "cmp-out" / "comparison.md").exists()


def test_report_on_a_non_run_directory_is_one_line(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path)]) == 2
    assert "not a frames run directory" in capsys.readouterr().err


def test_compare_runs_each_prompt_into_its_own_dir(tmp_path, tiny_retriever, capsys, monkeypatch):
    from frames_agent.eval.frames import commands as frames_commands

    monkeypatch.setattr(frames_commands, "build_components", builder(tiny_retriever))
    argv = ["compare", "--prompts", "vanilla", "planning", "--data", TINY, "--out", str(tmp_path / "cmp"),
            "--model", "scripted", "--k", "2", "--n", "2", "--n-docs", "3", "--no-progress"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "cmp" / "vanilla" / "results.jsonl").exists() and (tmp_path / "cmp" / "planning").is_dir()
    assert re.search(r"\| vanilla \| 6 \| 0 \| 6 \| 0 \| 66.7% \[", out) and "planning vs vanilla: +0.0 points" in out
    assert cli.main(argv) == 0  # resumable: the second time runs nothing
    assert "6 already done" in capsys.readouterr().err
    for name in ("comparison.md", "comparison.csv", "comparison.json", "recall_overlay.png", "report.html"):
        assert (tmp_path / "cmp" / name).is_file(), name  # compare writes its comparison itself
    assert cli.main(["report", str(tmp_path / "cmp")]) == 0  # a compare directory stands for its variants
    out = capsys.readouterr().out
    # the baseline is the first prompt named, as compare printed it: never re-ordered by name
    assert "cmp/planning: 6 question(s)" in out and "planning vs vanilla" in out and "vanilla vs planning" not in out


def test_compare_names_each_prompt_dir_after_its_whole_file_name(tmp_path, tiny_retriever, capsys, monkeypatch):
    from frames_agent.core.paths import project_root
    from frames_agent.eval.frames import commands as frames_commands

    monkeypatch.setattr(frames_commands, "build_components", builder(tiny_retriever))
    text = (project_root() / "agent" / "prompts" / "vanilla.txt").read_text()
    long = ["x" * 70 + "-first", "x" * 70 + "-second"]  # alike for 70 characters: a cut name would merge them
    for name in long:
        (tmp_path / f"{name}.txt").write_text(text)
    argv = ["compare", "--prompts", *(str(tmp_path / f"{n}.txt") for n in long), "--data", TINY, "--out",
            str(tmp_path / "cmp"), "--model", "scripted", "--k", "1", "--n", "1", "--limit", "1", "--no-progress"]
    assert cli.main(argv) == 0, capsys.readouterr().err
    assert all((tmp_path / "cmp" / name / "results.jsonl").is_file() for name in long)


def test_bad_concurrency_is_one_line(tmp_path, tiny_retriever):
    with pytest.raises(FramesAgentError, match="--concurrency must be at least 1"):
        run(tmp_path, tiny_retriever, concurrency=0)


@pytest.mark.model
def test_real_local_model_bm25_on_the_default_index(tmp_path, capsys):
    code = cli.main(["frames", "--system", "bm25", "--limit", "1", "--out", str(tmp_path / "real"), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and "1 question(s) | accuracy" in out and (tmp_path / "real" / "report.md").exists()


def test_estimate_is_said_up_front_for_the_local_model(tmp_path, tiny_retriever):
    _, lines = run(tmp_path, tiny_retriever, model="local:qwen2.5-coder-1.5b", limit=2)
    estimate = next(line for line in lines if line.startswith("estimate:"))
    assert "2 question(s) × 3 LLM call(s)" in estimate and "an estimate" in estimate


def test_estimate_counts_self_ask_calls():
    from frames_agent.eval.frames.estimate import calls_per_question

    settings = SimpleNamespace(retrieval_only=False, n=5, system="oracle", judge="none", judge2=None, model="local:qwen")
    assert calls_per_question(settings, AgentConfig(sub_questions=3)) == (5, 0)
    assert calls_per_question(settings, AgentConfig()) == (1, 0)


def test_estimate_counts_the_steps_the_config_runs():
    from frames_agent.eval.frames.estimate import calls_per_question

    # `--set n=2` reaches AgentConfig.n while the --n flag stays 5: the agent plans twice.
    settings = SimpleNamespace(retrieval_only=False, n=5, system="multistep", judge="none", judge2=None, model="x")
    assert calls_per_question(settings, AgentConfig(n=2)) == (3, 0)


# --- integrity: content identity, resolution before config, exit codes --------------------------------------------
class Fingerprinted:
    """The tiny retriever under an index content fingerprint (the attribute BM25Retriever carries)."""

    def __init__(self, inner, fingerprint: str):
        self.inner, self.fingerprint = inner, fingerprint

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_resume_against_other_index_content_is_refused_naming_both_fingerprints(tmp_path, tiny_retriever):
    first, _ = run(tmp_path, tiny_retriever, limit=1, build=builder(Fingerprinted(tiny_retriever, "idx-aaa")))
    assert json.loads((first.out / "config.json").read_text())["index_fingerprint"] == "idx-aaa"
    with pytest.raises(FramesAgentError, match=r"\(index_fingerprint was 'idx-aaa', now 'idx-bbb'\)"):
        run(tmp_path, tiny_retriever, limit=2, build=builder(Fingerprinted(tiny_retriever, "idx-bbb")))
    same, _ = run(tmp_path, tiny_retriever, limit=2, build=builder(Fingerprinted(tiny_retriever, "idx-aaa")))
    assert same.ran == 1 and same.summary.n == 2


def test_a_run_from_before_index_fingerprints_adopts_the_current_one_once(tmp_path, tiny_retriever):
    first, _ = run(tmp_path, tiny_retriever, limit=1, build=builder(Fingerprinted(tiny_retriever, "idx-aaa")))
    config = json.loads((first.out / "config.json").read_text())
    del config["index_fingerprint"]
    (first.out / "config.json").write_text(json.dumps(config))
    second, lines = run(tmp_path, tiny_retriever, limit=2, build=builder(Fingerprinted(tiny_retriever, "idx-aaa")))
    assert second.ran == 1 and any("before index fingerprints were recorded" in line for line in lines)
    assert json.loads((first.out / "config.json").read_text())["index_fingerprint"] == "idx-aaa"
    with pytest.raises(FramesAgentError, match=r"\(index_fingerprint was 'idx-aaa', now 'idx-bbb'\)"):
        run(tmp_path, tiny_retriever, limit=3, build=builder(Fingerprinted(tiny_retriever, "idx-bbb")))


def test_a_mistyped_judge_writes_no_config_so_the_corrected_rerun_runs(tmp_path, tiny_index, monkeypatch, capsys):
    from frames_agent.agent.llm import spec

    real = spec.resolve_model
    monkeypatch.setattr("frames_agent.agent.llm.resolve_model",
                        lambda s, **kw: ScriptedLLM(responder=responder) if s == "scripted" else real(s, **kw))
    out = tmp_path / "run"
    argv = ["frames", "--data", TINY, "--out", str(out), "--model", "scripted", "--k", "2", "--n", "2",
            "--n-docs", "3", "--index", str(tiny_index), "--limit", "2", "--no-progress"]
    assert cli.main([*argv, "--judge", "nosuch:x"]) == 2
    assert "nosuch" in capsys.readouterr().err and not (out / "config.json").exists()
    assert cli.main([*argv, "--judge", "scripted"]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["judge"] == "scripted" and len(config["index_fingerprint"]) >= 8  # the real index content id


def test_a_directory_with_results_but_no_config_is_refused(tmp_path, tiny_retriever):
    out = tmp_path / "run"
    out.mkdir()
    (out / "results.jsonl").write_text('{"id": "0", "question": "q", "gold_answer": "a"}\n')
    with pytest.raises(FramesAgentError, match="has results.jsonl but no config.json"):
        run(tmp_path, tiny_retriever)


def test_a_run_where_every_question_failed_exits_non_zero(tmp_path, tiny_retriever, monkeypatch, capsys):
    from frames_agent.eval.frames import commands as frames_commands

    class Broken:
        name = "multistep"

        async def run(self, question, answer=True):
            raise RuntimeError("model server gone")

    monkeypatch.setattr(frames_commands, "build_components", builder(tiny_retriever, wrap=lambda s: Broken()))
    code = cli.main(["frames", "--data", TINY, "--out", str(tmp_path / "run"), "--model", "scripted", "--k", "2",
                     "--n", "2", "--n-docs", "3", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("error: every question failed (6 of 6; first: RuntimeError: model server")


def test_a_corrupt_title_table_fails_the_run_with_non_zero_exit(tmp_path, tiny_index, monkeypatch, capsys):
    import shutil

    index = tmp_path / "index"
    shutil.copytree(tiny_index, index)
    (index / "titles.tsv").write_text("this line has no tabs\n")
    monkeypatch.setattr("frames_agent.agent.llm.resolve_model", lambda s, **kw: ScriptedLLM(responder=responder))
    code = cli.main(["frames", "--data", TINY, "--out", str(tmp_path / "run"), "--model", "scripted", "--k", "2",
                     "--n", "2", "--n-docs", "3", "--index", str(index), "--judge", "none", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and err[-1].startswith("error: ")


def test_records_and_summary_time_every_call_by_node(tmp_path, tiny_retriever):
    outcome, _ = run(tmp_path, tiny_retriever, limit=6)
    records = read_results(outcome.out)
    judged = [r for r in records if r["judge_calls"]]
    assert judged, "the scripted run asks the judge at least once"
    for record in records:
        nodes = [c["node"] for c in record["calls"]]
        assert nodes[:3] == ["plan", "plan", "answer"] and nodes[3:] == ["judge"] * record["judge_calls"]
        assert all(c["prompt_tokens"] > 0 and c["seconds"] >= 0 for c in record["calls"])
    timing = outcome.summary.timing
    assert timing["plan"].calls == 12 and timing["answer"].calls == 6
    assert timing["judge"].calls == sum(r["judge_calls"] for r in records)
    assert "- Time in plan: 12 call(s)" in (outcome.out / "report.md").read_text()


def test_a_question_past_its_deadline_is_recorded_failed_and_the_run_goes_on(tmp_path, tiny_retriever):
    class HungOnPhil(ScriptedLLM):
        async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
            if "Punxsutawney Phil observed" in str(messages[-1].content):
                await asyncio.sleep(30)  # a model that never answers this one question
            return await super()._agenerate(messages, stop, run_manager, **kwargs)

    def build(s: FramesRunSettings, config: AgentConfig) -> Components:
        agent = FramesAgent(HungOnPhil(responder=responder), tiny_retriever, config=config)
        return Components(system=make_system(s.system, agent, n_docs=config.n_docs),
                          coverage=CoverageChecker(tiny_retriever), rater=Autorater(agent.llm, "scripted"))

    s = settings(tmp_path, base_url="http://ann:sk-in-url-123456@127.0.0.1:9/v1", concurrency=2)
    config = AgentConfig(k=2, n=2, n_docs=3, question_timeout=1.5)
    outcome = run_frames(s, config, build=build, echo=lambda line: None)
    records = {r["id"]: r for r in read_results(outcome.out)}
    assert records["2"]["failed"] and "QuestionTimeout" in records["2"]["error"]
    assert not records["0"]["failed"] and outcome.summary.failed == 1 and outcome.summary.n == 6
    recorded = (outcome.out / "config.json").read_text()
    assert "sk-in-url" not in recorded and "***@127.0.0.1:9" in recorded


class FailingOn:
    """Wraps a system: the run of one question id raises."""

    def __init__(self, system, qid: str):
        self.inner, self.qid, self.name = system, qid, system.name

    async def run(self, question, answer=True):
        if question.id == self.qid:
            raise RuntimeError("search backend gone")
        return await self.inner.run(question, answer)


def test_retrieval_only_with_a_failed_question_shows_no_accuracy_anywhere(tmp_path, tiny_retriever):
    build = builder(tiny_retriever, wrap=lambda system: FailingOn(system, "2"))
    outcome, _ = run(tmp_path, tiny_retriever, retrieval_only=True, build=build)
    s = outcome.summary
    assert s.failed == 1 and s.accuracy is None
    assert s.by_reasoning_type and all(v.accuracy is None for v in s.by_reasoning_type.values())
