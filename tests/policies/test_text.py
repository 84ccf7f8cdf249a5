"""How the policy writes shares (policies/text.py), property-tested over the edge values that once printed
"95% CI 99.9%-> 99.9%" and "< 0.1%-0.1%": an interval reads "a to b", its bounds in order, never both alike unless
equal, and a marker ("<", ">") only where four decimals cannot tell the bound from 0 % or 100 %."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from policies.text import pct, plural, share_range

EDGES = [0.0, 1e-7, 4e-4, 9.99e-4, 1e-3, 0.0012, 0.5, 0.9987, 0.9991, 0.99949, 0.99996, 0.9999999, 1.0]
SHARE = st.one_of(st.sampled_from(EDGES), st.floats(min_value=0, max_value=1, allow_nan=False))
_BOUND = r"[<>]? ?\d+(?:\.\d+)?%"


@given(SHARE, SHARE)
def test_an_interval_reads_low_to_high_and_tells_its_bounds_apart(a: float, b: float) -> None:
    low, high = min(a, b), max(a, b)
    text = share_range(low, high)
    match = re.fullmatch(rf"({_BOUND}) to ({_BOUND})", text)
    assert match, text
    first, second = match.groups()
    if first == second:  # alike only when the values are, or beyond four decimals at 0 % or 100 %
        assert low == high or first.startswith(("<", ">")) or pct(low, 4) == pct(high, 4), text
    for bound, value in ((first, low), (second, high)):
        if bound.startswith(("<", ">")):
            assert 0 < value < 1e-6 or 1 - 1e-6 < value < 1, text


def test_the_cases_that_printed_badly() -> None:
    assert share_range(0.9991, 0.99996) == "99.910% to 99.996%"
    assert share_range(0.0004, 0.0012) == "0.04% to 0.12%"
    assert share_range(0.119, 0.128) == "11.9% to 12.8%"
    assert share_range(None, 0.5) == "n/a"


def test_a_count_has_its_noun_in_the_right_number() -> None:
    assert [plural(n, "row") for n in (0, 1, 2, 1200)] == ["0 rows", "1 row", "2 rows", "1,200 rows"]
    assert plural(1, "class", "classes") == "1 class" and plural(3, "class", "classes") == "3 classes"
