"""format_ok per question: in each record, in summary.json and in report.md, for the "Answer:" parser and
for structured answers, so a run with --set structured_answer=false compares with one with true."""
from __future__ import annotations

import json
import re

from frames_agent.agent.api import FramesAgent
from frames_agent.agent.config import AgentConfig
from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.eval.frames.autorater import Autorater
from frames_agent.eval.frames.records import QuestionRecord
from frames_agent.eval.frames.runner import Components, run_frames
from frames_agent.eval.frames.systems import CoverageChecker, make_system
from tests.eval.frames.test_runner import SCRIPT, _qid, read_results, responder, settings


def structured_responder(messages) -> str | dict:
    """The runner's scripted model, answering in JSON: question 2 with a reply that is no JSON at all."""
    text = str(messages[-1].content)
    if '{"reasoning": "...", "answer": "..."}' not in text:
        return responder(messages)
    qid = _qid(text)
    if qid == "2":
        return f"The documents say so.\nAnswer: {SCRIPT[qid][2]}"
    return {"reasoning": "The documents say so.", "answer": SCRIPT[qid][2]}


def _run(tmp_path, retriever, structured: bool):
    def build(s, config):
        llm = ScriptedLLM(responder=structured_responder, supports_json_schema=True)
        agent = FramesAgent(llm, retriever, config=config)
        return Components(system=make_system(s.system, agent, n_docs=config.n_docs),
                          coverage=CoverageChecker(retriever), rater=Autorater(None, "none"))

    s = settings(tmp_path / ("on" if structured else "off"), judge="none")
    config = AgentConfig(k=s.k, n=s.n, n_docs=s.n_docs, structured_answer=structured)
    return run_frames(s, config, build=build, echo=lambda line: None)


def test_format_ok_is_recorded_and_summarised_for_both_ways_of_reading(tmp_path, tiny_retriever):
    on, off = _run(tmp_path, tiny_retriever, True), _run(tmp_path, tiny_retriever, False)
    records = {r["id"]: r for r in read_results(on.out)}
    assert records["0"]["format_ok"] is True and records["0"]["final"]["structured"]
    assert records["2"]["format_ok"] is False and not records["2"]["final"]["structured"]
    assert records["2"]["answer"] == SCRIPT["2"][2]  # the fallback parser still read it
    summary = json.loads((on.out / "summary.json").read_text())
    assert summary["format_ok"] == 5 / 6 and summary["structured_answers"] == 5 and summary["format_ok_ci"]
    report = (on.out / "report.md").read_text()
    assert re.search(r"Answer format followed \(format_ok.*\): 0\.83.*read from a structured reply: 5\.", report)
    plain = json.loads((off.out / "summary.json").read_text())
    assert plain["format_ok"] == 1.0 and plain["structured_answers"] == 0
    assert all(r["format_ok"] and not r["final"]["structured"] for r in read_results(off.out))


def test_older_records_get_format_ok_from_their_final_and_failed_ones_none():
    assert QuestionRecord(id="1", final={"format_ok": True}).format_ok is True
    assert QuestionRecord(id="1").format_ok is None and QuestionRecord(id="1", failed=True, final={}).format_ok is None
