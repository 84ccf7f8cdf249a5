"""The smallest dose at which a verdict reaches WARNING and BLOCK, by bisection over a dose grid.

The verdict at a dose is the policy's, on measured numbers whose confidence intervals the policy already reads; what
bisection adds is where along the grid it changes. Doses between two grid points were not tested, so a threshold is
a bracket — the largest dose tested that stayed below the level and the smallest that reached it — never a point.
Bisection assumes that a larger dose never does less harm; every dose it did test is kept, and a test that
contradicts the assumption (a larger dose with a milder verdict) is reported, not hidden.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from policies import Verdict

Level = Literal["WARNING", "BLOCK"]
LEVELS: tuple[Level, ...] = ("WARNING", "BLOCK")
_RANK = {Verdict.PASS: 0, Verdict.WARNING: 1, Verdict.BLOCK: 2}


class DosePoint(BaseModel):
    """One tested dose: the policy's verdict and the task's headline share (flip rate or moved share) with its CI."""

    model_config = ConfigDict(frozen=True)

    dose: float
    verdict: Verdict
    share: float | None = None
    share_low: float | None = None
    share_high: float | None = None
    reasons: list[str] = []  # the codes of the reasons that set the verdict


class Bracket(BaseModel):
    """Where a level is reached: `tolerated` is the largest dose tested below it (None: even the smallest dose of
    the grid reaches it), `reached` the smallest dose tested at or above it (None: not reached up to the grid's
    largest dose, which is then `tolerated`)."""

    model_config = ConfigDict(frozen=True)

    tolerated: float | None
    reached: float | None


class Search(BaseModel):
    """The outcome of one axis: a bracket per level, every dose tested (ascending), and what stopped it."""

    brackets: dict[Level, Bracket]
    points: list[DosePoint]
    monotone: bool
    incomplete: str | None = None  # a dose the policy could not judge (INCOMPLETE): the thresholds are unknown


def search(grid: Sequence[float], judge: Callable[[float], DosePoint]) -> Search:
    """Bisection for BLOCK, then for WARNING within it, over `grid` (ascending doses); `judge` runs one dose."""
    doses = list(grid)
    if not doses or doses != sorted(doses):
        raise ValueError(f"a dose grid must be non-empty and ascending, got {doses}")
    seen: dict[int, DosePoint] = {}

    def at(i: int) -> DosePoint:
        if i not in seen:
            seen[i] = judge(doses[i])
        return seen[i]

    brackets: dict[Level, Bracket] = {}
    upper = len(doses) - 1
    for level in reversed(LEVELS):  # BLOCK first: WARNING is reached no later than BLOCK
        found = _first_reaching(at, level, upper)
        if isinstance(found, str):
            points = [seen[i] for i in sorted(seen)]
            return Search(brackets={}, points=points, monotone=_monotone(points), incomplete=found)
        if found is None:
            brackets[level] = Bracket(tolerated=doses[-1], reached=None)
            continue
        brackets[level] = Bracket(tolerated=doses[found - 1] if found > 0 else None, reached=doses[found])
        upper = found
    points = [seen[i] for i in sorted(seen)]
    return Search(brackets={lv: brackets[lv] for lv in LEVELS}, points=points, monotone=_monotone(points))


def _first_reaching(at: Callable[[int], DosePoint], level: Level, upper: int) -> int | None | str:
    """The smallest index in [0, upper] whose verdict reaches `level` (None: not even `upper`; a str: a dose the
    policy could not judge)."""
    need = _RANK[Verdict(level)]
    top = at(upper)
    if top.verdict == Verdict.INCOMPLETE:
        return f"dose {top.dose:g}: INCOMPLETE ({', '.join(top.reasons) or 'no reason'})"
    if _RANK[top.verdict] < need:
        return None
    low, high = -1, upper  # the virtual dose -1 is "no change"
    while high - low > 1:
        mid = (low + high) // 2
        point = at(mid)
        if point.verdict == Verdict.INCOMPLETE:
            return f"dose {point.dose:g}: INCOMPLETE ({', '.join(point.reasons) or 'no reason'})"
        if _RANK[point.verdict] >= need:
            high = mid
        else:
            low = mid
    return high


def _monotone(points: list[DosePoint]) -> bool:
    ranks = [_RANK.get(p.verdict, 0) for p in points]
    return all(a <= b for a, b in zip(ranks, ranks[1:], strict=False))
