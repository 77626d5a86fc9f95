"""The wikitext cleaner: prose kept, markup dropped, and linear time on any page (unclosed and nested markup too)."""
from __future__ import annotations

import time

import pytest

from frames_agent.index.wikitext import wikitext_to_text


@pytest.mark.parametrize("wikitext,text", [
    ("A [[Lake Suvi|lake]] and [[Image:x.png|thumb|a [[b]] cap]] {{convert|3|km}} ''b''.", "A lake and b."),
    ("x {{a|{{b|c}}}} y {{{1|z}}} w", "x y w"),  # nested templates and arguments
    ("[[a|b [[c]] d]] [[e]]s [[:Category:Y]] [[Category:Z]] [[de:X]]", "b c d es"),
    ("[http://x.org the site] and [https://y.org] and [notalink]", "the site and and [notalink]"),
    ("t<ref>note</ref> u<ref name=\"n\"/> <b>bold</b> <math>x^2</math> a <i>b</i> c", "t u bold a b c"),
    ("<nowiki>[[raw]] {{kept}}</nowiki> &amp; &lt;ref&gt;", "[[raw]] {{kept}} & <ref>"),
    ("{| class=\"wikitable\"\n| a || {{b}}\n|}\nafter", "after"),
    ("== History ==\n* item [[x]]\n# two\n----\n__NOTOC__<!-- hidden --> end", "History\nitem x\ntwo\nend"),
    ("{{Infobox\n|name=x\n|}}\nprose", "prose"),
    ("kept [[a|b <!-- unclosed comment runs to the end", "kept [[a|b"),
])
def test_prose_is_kept_and_markup_dropped(wikitext, text):
    assert wikitext_to_text(wikitext) == text


@pytest.mark.parametrize("wikitext,text", [
    ("[[a|" * 3 + "x", "[[a|[[a|[[a|x"),  # an opener never closed is text
    ("{{a|" * 3 + "x", "{{a|{{a|{{a|x"),
    ("a }} b ]] c |} d", "a }} b ]] c |} d"),  # a closer with nothing open is text
    ("{{a|[[b}} c", "{{a|[[b}} c"),  # a closer matches only the innermost open construct
    ("t <ref>never closed", "t never closed"),
    ("a < b > c and <notatag>", "a < b > c and <notatag>"),
])
def test_unbalanced_markup_stays_text(wikitext, text):
    assert wikitext_to_text(wikitext) == text


_HOSTILE = ["[[a|", "[[a ", "{{a|", "{{{a|", "[http://x ", "<ref>", "<b>", "{|\n", "''a ", "[[a|{{b|", "[[a|[[b]] ",
            "<ref name=", "[[File:a|", "{{a|b=", "<ref>[[a|", "[[a|<ref>", "{{a|[[b|", "}}", "]]", "|}\n", "<nowiki>",
            "=" * 50 + "a", "[http://x" + " " * 50, "[[" * 20, "{{" * 20, "</ref>", "\n*#:;", "<!--"]


def _hostile(size: int) -> str:
    """Every shape that made a general parser quadratic, each repeated over an equal share of size characters."""
    share = size // len(_HOSTILE)
    return "".join((shape * (share // len(shape) + 1))[:share] for shape in _HOSTILE)


def _prose(size: int) -> str:
    return ("Velmora is a town on the shore of Lake Suvi. " * (size // 45 + 1))[:size]


def _seconds(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        wikitext_to_text(text)
        best = min(best, time.perf_counter() - start)
    return best


def _ratio(text: str) -> float:
    """Time to clean text over the time to clean plain prose of the same size."""
    return _seconds(text) / _seconds(_prose(len(text)))


# A linear cleaner stays within a constant factor of plain prose at every size (the worst shape here is ~25x); a
# quadratic one passes it at the first size already and grows with the size.
BOUND = 100


@pytest.mark.parametrize("shape", _HOSTILE)
def test_each_hostile_shape_takes_linear_time(shape):
    for size in (1 << 12, 1 << 16):
        ratio = _ratio((shape * (size // len(shape) + 1))[:size])
        assert ratio < BOUND, f"{size:,} characters of {shape!r} took {ratio:.0f}x the time of plain prose"


def test_a_page_of_every_hostile_shape_takes_linear_time_up_to_half_a_megabyte():
    for size in (1 << 13, 1 << 16, 1 << 19):
        ratio = _ratio(_hostile(size))
        assert ratio < BOUND, f"{size:,} characters of hostile wikitext took {ratio:.0f}x the time of plain prose"
