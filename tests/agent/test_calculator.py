"""The safe calculator: arithmetic and date differences only; everything else is refused."""
from __future__ import annotations

from fractions import Fraction

import pytest

from frames_agent.agent.calculator import calculate, days_between, format_number, years_between
from frames_agent.agent.errors import CalculatorError


@pytest.mark.parametrize("expression, value", [
    ("1989 - 1912", "77"), ("3 * (4 + 2) / 4", "4.5"), ("1,234 + 6", "1240"), ("2 ** 10", "1024"),
    ("10 × 3 ÷ 4", "7.5"), ("-(5 - 8)", "3"), ("round(10 / 3, 2)", "3.33"), ("max(3, 7) - min(3, 7)", "4"),
    ("1 / 3", "0.3333"), ("years_between(1912-06-23, 1954-06-07)", "41"),
    ("days_between(1969-07-20, 1969-07-24)", "4"), ("years_between(1900, 1950)", "50"),
])
def test_arithmetic_and_dates(expression, value):
    assert format_number(calculate(expression)) == value


@pytest.mark.parametrize("expression", [
    "__import__('os').system('true')", "open('/etc/passwd')", "x + 1", "(1).__class__", "[1, 2]", "lambda: 1",
    "1 if 1 else 2", "True + 1", "'abc'", "9 ** 9 ** 9", "10 ** 100", "1 / 0", "print(1)", "abs(x=1)",
    "years_between('2020-13-45', 2000)", "", "1 +", "a" * 300, "f'{1}'", "{1: 2}", "1; 2",
])
def test_refuses_anything_that_is_not_arithmetic(expression):
    with pytest.raises(CalculatorError):
        calculate(expression)


def test_date_helpers_count_like_ages():
    assert years_between("2000-03-01", "2020-02-29") == 19 and years_between("2020-02-29", "2000-03-01") == -19
    assert days_between("2024-01-01", "2023-12-31") == -1
    assert calculate("7 / 2") == Fraction(7, 2)
