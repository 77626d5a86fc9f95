"""The JSON repair never raises, however deep a looping model nests its brackets."""
from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from frames_agent.agent.llm.json_repair import loads_lenient, parse_structured


class Queries(BaseModel):
    queries: list[str] = Field(min_length=1, max_length=5)


def fallback(raw: str) -> Queries:
    return Queries(queries=["fallback plan"])


@pytest.mark.parametrize("opener", ["[", "{", '{"queries": [', "[{"])
def test_thousands_of_unclosed_brackets_fall_back(opener):
    raw = '{"queries": ["a", ' + opener * 3000
    result = parse_structured(raw, Queries, fallback)
    assert result.value.queries in (["a"], ["fallback plan"])


def test_deep_nesting_alone_is_a_fallback_not_an_error():
    result = parse_structured("[" * 5000, Queries, fallback)
    assert result.fallback and result.value.queries == ["fallback plan"]


def test_deep_nesting_is_a_value_error_for_loads_lenient():
    with pytest.raises(ValueError):
        loads_lenient("[" * 5000 + "]" * 5000)


def test_the_depth_bound_is_the_same_on_every_python():
    from frames_agent.agent.llm.json_repair import MAX_DEPTH

    inside = "[" * (MAX_DEPTH + 1) + '\\"'  # brackets inside a string do not count
    assert loads_lenient('{"a": ["' + inside + '", {"b": "}\\"]"}]}')[0]["a"][0] == "[" * (MAX_DEPTH + 1) + '"'
    assert loads_lenient("[" * MAX_DEPTH + "]" * MAX_DEPTH)[0] is not None
    with pytest.raises(ValueError, match="nested too deeply"):
        loads_lenient("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
