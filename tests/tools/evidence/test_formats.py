"""Number formats shared by the report, the chat and the terminal."""

from __future__ import annotations

import pytest

from tools.evidence.formats import pct, points, relative, sig


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "n/a"),
        (0.0, "0"),
        (0.8325, "0.8325"),
        (12.3456, "12.35"),
        (1842.3845, "1,842"),
        (123456.7, "123,457"),
        (0.000123456, "0.0001235"),
        (-0.0123456, "-0.01235"),
        (1.5e-7, "1.500e-07"),
        (2.5e12, "2.500e+12"),
        (float("inf"), "inf"),
    ],
)
def test_sig_keeps_four_significant_digits_on_any_scale(value: float | None, expected: str) -> None:
    assert sig(value) == expected


def test_signed_forms() -> None:
    assert sig(1842.3845, sign=True) == "+1,842" and sig(-0.5, sign=True) == "-0.5000"
    assert points(-0.0609) == "-6.09 pp" and points(None) == "n/a"
    assert relative(2213.1) == "+221310.0%" and relative(-0.05) == "-5.0%" and relative(None) == "n/a (baseline 0)"


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (7199 / 7200, 1, "> 99.9%"),  # not "100.0%": one row did not move
        (7199 / 7200, 2, "99.99%"),
        (1.0, 1, "100.0%"),
        (1 / 7200, 1, "< 0.1%"),  # not "0.0%": one row moved
        (0.0, 2, "0.00%"),
        (0.5, 2, "50.00%"),
        (None, 2, "n/a"),
    ],
)
def test_pct_never_rounds_to_all_or_nothing(value: float | None, digits: int, expected: str) -> None:
    assert pct(value, digits) == expected
