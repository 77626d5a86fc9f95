"""The FRAMES short-cuts decide only what is certain: every case the issue found decided wrongly goes to the judge."""
from __future__ import annotations

import asyncio

import pytest

from frames_agent.agent.llm.testing import ScriptedLLM
from frames_agent.eval.frames.autorater import Autorater, exact_match, no_overlap, normalize_answer, number_mismatch


@pytest.mark.parametrize("response,gold", [
    ("Either Spain or Portugal.", "Spain"),  # hedged between two answers
    ("It was not Marie Curie, it was Pierre Curie.", "Marie Curie"),  # negated, another candidate
    ("1969 or 1970", "1969"),  # hedged between numbers
    ("Spain, then Portugal", "Spain"),  # another candidate, no hedge word
    ("Maybe Spain", "Spain"),  # hedge
    ("Spain isn't it", "Spain"),  # negation
    ("It was 1969, not 1970", "1969"),
    ("Jane Ballou or Laura Bush", "Jane Ballou"),
    # A rival named beside the gold, in lower case: the judge decides.
    ("red and blue", "Red"), ("red, blue", "Red"), ("red/blue", "Red"), ("red & blue", "Red"),
    ("red with blue stripes", "Red"), ("Red as well as green", "Red"), ("red; blue", "Red"),
])
def test_uncertain_containment_is_not_a_match(response, gold):
    assert not exact_match(response, gold)


@pytest.mark.parametrize("response,gold", [
    ("110,000 cm", "110,000cm."), ("Spain", "spain."), ("The answer is Spain.", "Spain"), ("Answer: 87 years", "87"),
    ("Romeo and Juliet", "Romeo and Juliet"), ("It was 110,000 people.", "110,000"),
])
def test_certain_matches(response, gold):
    assert exact_match(response, gold)


@pytest.mark.parametrize("response,gold", [
    ("about 1.5 million", "1,502,000"),  # approximate: the judge decides
    ("1.5 million", "1,502,000"),  # the gold rounded to the response's precision
    ("The terms did not overlap; he served 1990-1994 and she 1996-2000.", "Zero"),
    ("110,000 cm", "110,000cm."),  # glued unit
    ("one time", "Once."),
    ("It happened twice, in 1962 and 1965", "2"),
    ("Between 10 and 12", "11"),
    ("1970", "1969"),  # a rounded year is for the judge
])
def test_number_check_does_not_fail_right_or_unclear_answers(response, gold):
    assert not number_mismatch(response, gold)


@pytest.mark.parametrize("response,gold", [("15 years", "12"), ("62", "1962"), ("It has 4 moons.", "7")])
def test_number_check_fails_a_plainly_different_number(response, gold):
    assert number_mismatch(response, gold)


@pytest.mark.parametrize("response,gold", [
    ("giraffes", "Giraffe"), ("KFC", "Kentucky Fried Chicken"), ("Kentucky Fried Chicken", "KFC"),
    ("one time", "Once."), ("The terms did not overlap.", "Zero"), ("U.S.", "United States"),
    ("The USA", "United States of America"),
])
def test_no_overlap_does_not_fail_plurals_abbreviations_or_count_words(response, gold):
    assert not no_overlap(response, gold)


def test_no_overlap_still_fails_a_different_name():
    assert no_overlap("The future wife's name is Laura Bush.", "Jane Ballou")
    assert no_overlap("I don't know.", "Paris")


def test_glued_units_are_split_but_ordinals_and_decades_kept():
    assert normalize_answer("110,000cm.") == "110000 cm"
    assert normalize_answer("the 1990s, 19th") == "1990s 19th"


@pytest.mark.parametrize("response,gold", [
    ("Either Spain or Portugal.", "Spain"), ("It was not Marie Curie, it was Pierre Curie.", "Marie Curie"),
    ("1969 or 1970", "1969"), ("about 1.5 million", "1,502,000"), ("the terms did not overlap", "Zero"),
    ("110,000 cm", "110,000cm."), ("giraffes", "Giraffe"), ("KFC", "Kentucky Fried Chicken"), ("one time", "Once."),
])
def test_the_issue_cases_reach_the_judge_or_are_right(response, gold):
    """With a small (strict) judge, nothing the issue lists is decided wrongly without asking."""
    llm = ScriptedLLM(responder=lambda messages: "Explanation: judged.\nDecision: TRUE")
    verdict = asyncio.run(Autorater(llm, "local:tiny").arate("Q?", gold, response))
    assert verdict.method in ("judge", "exact"), verdict
    if verdict.method == "exact":
        assert (response, gold) == ("110,000 cm", "110,000cm.")
    no_judge = asyncio.run(Autorater(None, "none").arate("Q?", gold, response))
    assert no_judge.outcome in ("unrated", "accurate")
