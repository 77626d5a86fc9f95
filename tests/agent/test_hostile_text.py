"""What a model writes can never hang the parsers: the answer parser, the JSON repair and the calculator stay bounded
on random and adversarial replies (Hypothesis), and the replies that once ran for minutes or forever, or would under a
quadratic parser, finish at once (in a subprocess, so a regression fails instead of hanging the suite)."""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from pydantic import BaseModel, Field

from frames_agent.agent.answers import MAX_ANSWER_CHARS, parse_reply
from frames_agent.agent.calculator import MAX_BITS, calculate
from frames_agent.agent.errors import CalculatorError
from frames_agent.agent.llm.json_repair import loads_lenient, parse_structured
from frames_agent.agent.queries import PlanReply, fallback_plan
from frames_agent.agent.subquestions import SubQuestions, fallback_sub_questions
from frames_agent.core.paths import project_root

# Replies that took 30 s to forever before the parsers were bounded, or are long enough that quadratic time would:
# (parser, reply).
ONCE_HUNG = {
    "calculator": ("answer", "Answer: ((((1/999999)^64)^64)^64)^64 = 1"),
    "label then spaces": ("answer", "answer" + " " * 3000 + "x"),
    "lead-in spaces": ("answer", " " * 20000 + "x"),
    "repeated label": ("answer", "Answer: answer" + " " * 3000 + "x"),
    "open fence": ("json", "```" + " " * 100_000),
    "brackets to cut at": ("json", "\\boxed{" * 100_000),
    "a long list": ("json", '{"queries": [' + '"a",' * 100_000),
    "many labels": ("answer", "x. answer: " * 20_000 + "\ny"),
}
# Hypothesis keeps caches (unicode tables, constants) beside the tests; not in the checkout.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "frames-agent-hypothesis")
PROPERTY = settings(max_examples=60, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Pieces a looping or hostile model repeats: labels, whitespace runs, brackets, quotes, fences, operators.
_PIECES = ["answer", "Answer:", "final", "is", " the ", ":", " ", "\t", "\n", " " * 200, "=", " = ", "(", ")", "[", "]",
           "{", "}", '"', "'", "```", "```json\n", ",", ".", ". ", "!", "\\boxed{", "-", "- ", "1.", "*", "**", "_",
           "^", "/", "Reasoning:", "9" * 40, "1/999999", "2024-01-01", "years_between(", "True", "None", "é", "：",
           ">"]
adversarial = st.lists(st.tuples(st.sampled_from(_PIECES), st.integers(1, 400)), max_size=30).map(
    lambda parts: "".join(piece * times for piece, times in parts))
replies = st.one_of(st.text(max_size=3000), adversarial)


class Queries(BaseModel):
    queries: list[str] = Field(min_length=1, max_length=5)


@pytest.mark.slow
def test_replies_that_once_hung_finish_at_once():
    code = ("import json, sys\nfrom agent.answers import parse_reply\n"
            "from agent.llm.json_repair import parse_structured\nfrom tests.agent.test_hostile_text import Queries\n"
            "for parser, text in json.loads(sys.stdin.read()).values():\n"
            "    parse_reply(text) if parser == 'answer' else parse_structured(text, Queries, lambda raw: None)\n")
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(ONCE_HUNG), cwd=project_root(),
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr[-2000:]


@PROPERTY
@given(replies)
@example("answer" + " " * 800 + "x")
@example("x. answer: " * 5000 + "\ny")
def test_parse_reply_is_bounded(reply):
    final = parse_reply(reply)
    assert len(final.model_answer) <= MAX_ANSWER_CHARS
    assert len(final.answer) <= MAX_ANSWER_CHARS + 64  # a computed number may replace a shorter one


@PROPERTY
@given(replies)
@example("```" + " " * 30000)
@example("\\boxed{" * 20000)
@example('{"queries": [' + '"a",' * 20000)
@example(" " * 8000 + "x")
def test_json_repair_never_raises(reply):
    result = parse_structured(reply, Queries, lambda raw: Queries(queries=["fallback"]))
    assert isinstance(result.value, Queries)
    # The agent's own fallbacks read the same text: the planner's and self-ask's.
    assert isinstance(parse_structured(reply, PlanReply, fallback_plan).value, PlanReply)
    assert isinstance(parse_structured(reply, SubQuestions, fallback_sub_questions).value, SubQuestions)
    try:
        loads_lenient(reply)
    except ValueError:
        pass


_number = st.one_of(st.integers(-10**7, 10**7).map(str), st.sampled_from(["1/999999", "0.1", "1.05", "1e-300", "1e308",
                                                                          "999999", "0", "64", "-64", "0.5"]))
expressions = st.recursive(
    _number, lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "//", "%", "^", "**"]), inner).map(" ".join),
        inner.map(lambda e: f"({e})"), inner.map(lambda e: f"-{e}"),
        st.tuples(st.sampled_from(["round", "abs", "min", "max"]), inner, inner).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]})")),
    max_leaves=12)


@PROPERTY
@given(expressions)
@example("((1/999999)^64)^64")
@example("round(1/3, 9999999)")
@example("(1/999999) ** 64 * (1/999999) ** 64 * (1/999999) ** 64")
def test_calculator_answers_or_refuses(expression):
    try:
        value = calculate(expression)
    except CalculatorError:
        return
    fraction = Fraction(value)
    assert abs(fraction) <= 10**30
    assert max(fraction.numerator.bit_length(), fraction.denominator.bit_length()) <= MAX_BITS
