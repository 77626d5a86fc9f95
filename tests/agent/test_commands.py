"""`python cli.py ask`: streamed human output, the --json object, one-line errors."""
from __future__ import annotations

import json

import pytest

from frames_agent import cli
from frames_agent.agent.llm.testing import ScriptedLLM


@pytest.fixture
def wired(monkeypatch, tiny_retriever):
    """ask with a scripted model and the tiny index in place of the real ones."""
    llm = ScriptedLLM([])
    monkeypatch.setattr("frames_agent.agent.llm.resolve_model", lambda spec, **kw: llm)
    monkeypatch.setattr("frames_agent.index.build.open_index", lambda name, **kw: tiny_retriever)
    return llm


def plan(*queries):
    return {"thought": "t", "queries": list(queries), "tool_calls": [], "enough": False}


def test_ask_streams_steps_and_answer(wired, capsys):
    wired.replies.extend([plan("Marta Kowalczyk"), plan("Brennick mayor"), "Answer: Tomas Ferrante"])
    assert cli.main(["ask", "Who is the mayor of the city where Marta Kowalczyk was born?", "--k", "1", "--n", "2"]) == 0
    out, err = capsys.readouterr()
    assert out.index("Step 1") < out.index("searching: Marta Kowalczyk") < out.index("Step 2")
    assert "+" in out and "Marta Kowalczyk" in out
    assert "Answer: Tomas Ferrante\nSources: Marta Kowalczyk;" in out
    assert "3 LLM calls" in err and "the answer prompt showed" in err


def test_ask_json(wired, capsys):
    wired.replies.extend([plan("Punxsutawney Phil"), "Answer: February 2"])
    assert cli.main(["ask", "When does Phil forecast?", "--k", "1", "--n", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"question", "answer", "steps", "documents", "llm_calls", "tokens", "seconds"}
    assert data["answer"] == "February 2" and data["llm_calls"] == 2
    assert data["steps"] == [{"step": 1, "queries": ["Punxsutawney Phil", "When does Phil forecast?"],
                              "new_doc_ids": data["steps"][0]["new_doc_ids"]}]
    assert data["documents"][0] == {"id": "phil", "title": "Punxsutawney Phil", "source": "bm25:tiny",
                                    "score": data["documents"][0]["score"]}
    assert set(data["tokens"]) == {"prompt", "completion"}


def test_ask_shows_self_ask_notes(wired, capsys):
    split = json.dumps({"questions": ["Where was Marta Kowalczyk born?"]})
    wired.replies.extend([plan("Marta Kowalczyk"), split, "She was born in Brennick.", "Answer: Brennick"])
    question = "In which city was Marta Kowalczyk born?"
    assert cli.main(["ask", question, "--k", "1", "--n", "1", "--set", "sub_questions=1"]) == 0
    out = capsys.readouterr().out
    assert "── notes (self-ask)" in out and "Where was Marta Kowalczyk born? → She was born in Brennick." in out
    assert "Answer: Brennick\nSources: " in out
    wired.replies.extend([plan("Marta Kowalczyk"), split, "She was born in Brennick.", "Answer: Brennick"])
    assert cli.main(["ask", question, "--k", "1", "--n", "1", "--set", "sub_questions=1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["findings"] == [{"question": "Where was Marta Kowalczyk born?", "answer": "She was born in Brennick."}]


@pytest.mark.parametrize("argv, message", [
    (["ask", "  "], "the question is empty"),
    (["ask", "q", "--n", "0"], "--n:"),
    (["ask", "q", "--n-docs", "100000"], "--n-docs:"),
    (["ask", "q", "--prompt", "no-such-prompt"], "no prompt named"),
    (["ask", "q", "--set", "plan_budjet=5"], "--set plan_budjet: no such agent config field"),
    (["ask", "q", "--set", "plan_budget"], "expected KEY=VALUE"),
    (["ask", "q", "--set", "plan_budget=-3"], "--plan-budget:"),
])
def test_ask_bad_input_is_one_line(wired, capsys, argv, message):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_ask_past_its_question_timeout_is_one_line(wired, capsys):
    wired.delay = 30.0
    wired.responder = lambda messages: plan("Brennick")
    code = cli.main(["ask", "Who is the mayor of Brennick?", "--k", "1", "--n", "1", "--question-timeout", "0.5"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "question deadline of 0.5 s" in err


@pytest.mark.parametrize("flag", ["--timeout", "--question-timeout"])
def test_non_positive_timeouts_are_refused(wired, capsys, flag):
    assert cli.main(["ask", "q?", flag, "0"]) == 2
    assert flag in capsys.readouterr().err


def test_set_reaches_the_config_and_the_question_query_runs_at_step_1(wired, capsys):
    wired.replies.extend([plan("Marta Kowalczyk"), "Answer: Brennick"])
    argv = ["ask", "Where was Marta Kowalczyk born?", "--k", "1", "--n", "1", "--json",
            "--set", "question_query=true", "--set", "plan-budget=300"]
    assert cli.main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["steps"][0]["queries"] == ["Marta Kowalczyk", "Where was Marta Kowalczyk born?"]
    assert "Step 1 of 1" in wired.prompts[0]


def test_ask_prints_the_answer_as_it_is_written(monkeypatch, tiny_retriever, capsys):
    from frames_agent.agent.llm.testing import StreamingScriptedLLM

    seen: list[str] = []
    reply = {"reasoning": "Marta was born in \"Brennick\"; its mayor is Tomas Ferrante.", "answer": "Tomas Ferrante"}
    llm = StreamingScriptedLLM([plan("Marta Kowalczyk"), reply], supports_json_schema=True, chunk_chars=5,
                               before_last=lambda: seen.append(capsys.readouterr().out))
    monkeypatch.setattr("frames_agent.agent.llm.resolve_model", lambda spec, **kw: llm)
    monkeypatch.setattr("frames_agent.index.build.open_index", lambda name, **kw: tiny_retriever)
    question = "Who is the mayor of the city where Marta Kowalczyk was born?"
    assert cli.main(["ask", question, "--k", "1", "--n", "1", "--set", "structured_answer=true"]) == 0
    out = "".join(seen[-1:]) + capsys.readouterr().out
    # Only the answer call streamed (the plan call kept its plain request); before its last piece was sent, the
    # reasoning and the answer's first words were on screen.
    assert len(seen) == 1
    assert '── answer\nMarta was born in "Brennick"; its mayor is Tomas Ferrante.\nAnswer: Tomas Ferra' in seen[0]
    assert out.count("Answer: Tomas Ferrante") == 1 and "Answer: Tomas Ferrante\nSources: Marta Kowalczyk;" in out


def test_json_fields_read_a_reply_split_anywhere():
    from frames_agent.agent.commands import JsonFields

    reply = '{\n "reasoning" : "A \\"quoted\\" line\\nand \\u00e9", "n": 3, "answer": "Paris"}'
    for size in (1, 2, 7):
        fields, pieces = JsonFields(), []
        for i in range(0, len(reply), size):
            pieces += fields.feed(reply[i:i + size])
        text = {}
        for field, piece in pieces:
            text[field] = text.get(field, "") + piece
        assert text == {"reasoning": 'A "quoted" line\nand é', "answer": "Paris"}


def test_json_fields_stop_reading_a_reply_past_the_bound():
    from frames_agent.agent.commands import MAX_STREAMED_CHARS, JsonFields

    fields = JsonFields()
    assert fields.feed('{"reasoning": "') == []  # no text yet
    shown = "".join(text for _, text in fields.feed("x" * (MAX_STREAMED_CHARS - 100)))
    assert shown == "x" * (MAX_STREAMED_CHARS - 100)
    assert fields.feed("y" * 200 + '", "answer": "Paris"}') == []  # printed whole at the end instead
