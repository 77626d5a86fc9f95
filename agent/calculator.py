"""A safe calculator for the answer step: arithmetic and date differences only, the ast walked against a whitelist
(nothing is ever passed to eval())."""
from __future__ import annotations

import ast
import datetime as dt
import math
import operator
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from frames_agent.agent.errors import CalculatorError

MAX_LENGTH = 200
_MAX_MAGNITUDE = 10**30
# Exact fractions grow without bound: every value, intermediate ones included, stays under this many bits.
MAX_BITS = 1024
MAX_NODES = 150  # parse-tree nodes of one expression (operators count): the step budget
MAX_ROUND_DIGITS = 15
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_ISO_DATE = re.compile(r"(?<![\w'\"])(\d{4}-\d{2}-\d{2})(?![\w'\"])")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_SYMBOLS = str.maketrans({"×": "*", "÷": "/", "−": "-", "–": "-", "^": "**"})


def _date(value: object) -> dt.date:
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise CalculatorError(f"not a date: {value!r}") from None
    if isinstance(value, int):  # a bare year
        return dt.date(value, 1, 1)
    raise CalculatorError("dates are written YYYY-MM-DD")


def days_between(a: object, b: object) -> int:
    """Days from date a to date b (negative when b is earlier)."""
    return (_date(b) - _date(a)).days


def years_between(a: object, b: object) -> int:
    """Whole years from date a to date b, as an age is counted."""
    start, end = sorted((_date(a), _date(b)))
    years = end.year - start.year - ((end.month, end.day) < (start.month, start.day))
    return years if _date(a) <= _date(b) else -years


_FUNCTIONS: dict[str, Callable[..., Any]] = {"abs": abs, "round": round, "min": min, "max": max,
              "days_between": days_between, "years_between": years_between}


def _bits(value: Fraction | int) -> int:
    fraction = Fraction(value)
    return max(fraction.numerator.bit_length(), fraction.denominator.bit_length())


def _number(value: object) -> Fraction | int:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise CalculatorError("only numbers can be computed with")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CalculatorError("number too large")
        value = Fraction(repr(value))  # as written (1.05 is 21/20), not the binary float's 53-bit fraction
    if abs(Fraction(value)) > _MAX_MAGNITUDE:
        raise CalculatorError("number too large")
    if _bits(value) > MAX_BITS:
        raise CalculatorError("number too precise to compute exactly")
    return value


def _power(left: Fraction | int, right: Fraction | int) -> Fraction | int | float:
    """left ** right, refused before computing when the result would be too large or too precise."""
    if abs(Fraction(right)) > 64 or abs(Fraction(left)) > 10**6:
        raise CalculatorError("power too large")
    if left == 0 and right < 0:
        raise CalculatorError("division by zero")
    if Fraction(right).denominator != 1:  # a root: a float is as exact as it gets
        if left < 0:
            raise CalculatorError("root of a negative number")
        return float(left) ** float(right)
    if _bits(left) * abs(int(right)) > MAX_BITS:
        raise CalculatorError("power too large")
    return Fraction(left) ** int(right) if isinstance(left, Fraction) or right < 0 else left ** int(right)


def _walk(node: ast.AST) -> object:
    if isinstance(node, ast.Expression):
        return _walk(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_number(_walk(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _number(_walk(node.left)), _number(_walk(node.right))
        if isinstance(node.op, ast.Pow):
            return _number(_power(left, right))
        if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and right == 0:
            raise CalculatorError("division by zero")
        if isinstance(node.op, ast.Div):
            return Fraction(left) / Fraction(right)
        return _number(_BINARY[type(node.op)](left, right))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
            and not node.keywords and 1 <= len(node.args) <= 3):
        args = [_walk(a) for a in node.args]
        if node.func.id not in ("days_between", "years_between"):
            args = [_number(a) for a in args]
        digits = args[1] if node.func.id == "round" and len(args) == 2 else 0
        if not isinstance(digits, int) or abs(digits) > MAX_ROUND_DIGITS:  # round(x, 10**9) computes 10**(10**9)
            raise CalculatorError(f"round: at most {MAX_ROUND_DIGITS} digits")
        try:
            return _number(_FUNCTIONS[node.func.id](*args))
        except (TypeError, ValueError, OverflowError) as exc:
            raise CalculatorError(f"{node.func.id}: {exc}") from None
    raise CalculatorError(f"not arithmetic: {type(node).__name__}")


def calculate(expression: str) -> Fraction | int:
    """The value of an arithmetic expression or date difference; CalculatorError for anything else."""
    text = (expression or "").strip().translate(_SYMBOLS)
    if not text or len(text) > MAX_LENGTH:
        raise CalculatorError("empty or too long expression")
    text = _ISO_DATE.sub(r"'\1'", _THOUSANDS.sub("", text))
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CalculatorError(f"cannot parse {expression!r}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalculatorError("expression too long")
    value = _walk(tree)
    if isinstance(value, str):
        raise CalculatorError("a bare string is not a calculation")
    return _number(value)


def format_number(value: Fraction | int) -> str:
    """An integer as is; anything else with at most 4 decimals, trailing zeros dropped."""
    if isinstance(value, Fraction) and value.denominator == 1:
        value = int(value)
    if isinstance(value, int):
        return str(value)
    return f"{float(value):.4f}".rstrip("0").rstrip(".")
