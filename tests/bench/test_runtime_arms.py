"""The runtime bench's pure parts: arm parsing, where two replies first differ, per-question sums and the summary."""
import pytest

from bench.runtime_arms import (
    CallResult,
    RuntimeArm,
    first_difference,
    parse_runtime_arms,
    projected_seconds,
    question_totals,
    summary,
)


def test_arms_name_runtime_and_options():
    arms = parse_runtime_arms("xllamacpp; rp=ik:repack=1,n_ubatch=256 ;ik")
    assert arms == [RuntimeArm("xllamacpp", "xllamacpp", {}), RuntimeArm("rp", "ik", {"repack": "1", "n_ubatch": "256"}),
                    RuntimeArm("ik", "ik", {})]
    assert arms[1].option("repack", 0) == 1 and arms[1].option("threads", 2) == 2


def test_unknown_runtime_or_repeated_name_is_refused():
    with pytest.raises(ValueError, match="unknown runtime 'vllm'"):
        parse_runtime_arms("fast=vllm")
    with pytest.raises(ValueError, match="names must differ"):
        parse_runtime_arms("ik;ik:repack=1")


def test_first_difference_names_the_first_differing_word():
    assert first_difference('{"answer": "Paris"}', '{"answer": "Paris"}') is None
    index, left, right = first_difference('{"answer": "Paris, France"}', '{"answer": "Lyon"}')
    assert (left, right) == ("Paris", "Lyon") and index == 7
    assert first_difference("a b", "a b c")[1:] == ("<end>", " ")


def test_question_totals_rates_count_only_tokens_read():
    calls = [CallResult(500, 0, 10.0, 50, 5.0, 15.5, "x"), CallResult(900, 400, 10.0, 50, 5.0, 15.5, "y")]
    totals = question_totals(calls)
    assert totals["read"] == 1000 and totals["out"] == 100 and totals["seconds"] == 31.0
    assert totals["prompt_tps"] == 50.0 and totals["gen_tps"] == 10.0


def test_projection_and_summary_compare_with_the_first_arm():
    assert projected_seconds(50.0, 10.0) == 3700 / 50 + 500 / 10
    slow = {"seconds": 100.0, "read": 1000, "out": 100, "prompt_seconds": 20.0, "generation_seconds": 10.0}
    fast = {**slow, "seconds": 60.0, "prompt_seconds": 10.0}
    lines = summary({"base": [slow], "new": [fast]}, {"base": [None], "new": [("q1.0", 3, "a", "b")]})
    assert "ratio 1.00" in lines[0] and "identical 1/1" in lines[0]
    assert "ratio 0.60" in lines[1] and "prompt 100.0 tok/s" in lines[1] and "identical 0/1" in lines[1]
    assert "'a' vs 'b' (call q1.0)" in lines[1]
