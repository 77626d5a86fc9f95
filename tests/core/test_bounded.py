"""The bounded JSON reader: the same values as json.loads within the bounds, one ValueError past them or for
anything that is not JSON (random and adversarial bodies, whole or in chunks), never a RecursionError."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frames_agent.core.bounded import MAX_DEPTH, DepthGuard, JSONOutOfBounds, check_json, loads

PROPERTY = settings(max_examples=200, deadline=None, database=None, derandomize=True)
values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                   max_size=4), max_leaves=30)
_PIECES = ["[", "]", "{", "}", '"', "\\", '\\"', ",", ":", "1", "a", " ", "\n", "[[[[", "]]]]", '{"a":', "data: "]
adversarial = st.lists(st.tuples(st.sampled_from(_PIECES), st.integers(1, 300)), max_size=20).map(
    lambda parts: "".join(piece * times for piece, times in parts).encode())


@PROPERTY
@given(values)
def test_values_within_the_bounds_read_as_json_loads_reads_them(value):
    text = json.dumps(value)
    assert loads(text) == json.loads(text) and loads(text.encode()) == json.loads(text)


@PROPERTY
@given(st.one_of(st.binary(max_size=2000), adversarial), st.lists(st.integers(0, 4000), max_size=6))
def test_any_body_is_a_value_or_one_value_error_and_chunks_count_alike(body, cuts):
    try:
        loads(body)
    except ValueError:
        pass
    whole, pieces = DepthGuard(), DepthGuard()
    errors = []
    for guard, chunks in ((whole, [body]), (pieces, _split(body, cuts))):
        try:
            for chunk in chunks:
                guard.feed(chunk)
            errors.append(None)
        except JSONOutOfBounds:
            errors.append("deep")
    assert errors[0] == errors[1] and (errors[0] or whole.depth == pieces.depth)


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c for c in cuts if 0 < c < len(data)})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]


def test_the_bounds_are_checked_before_parsing():
    with pytest.raises(JSONOutOfBounds, match=f"deeper than {MAX_DEPTH} levels"):
        loads("[" * 100_000 + "]" * 100_000)
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(JSONOutOfBounds, match="12 bytes, over the limit of 10"):
        check_json(b'"0123456789"', max_bytes=10)
    assert loads('["[[[[[[", "\\"]]]"]', max_depth=1) == ["[[[[[[", '"]]]']  # brackets in strings are text
