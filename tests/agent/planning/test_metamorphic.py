"""Metamorphic test of the offline planner (issue 37 item 5): for every phrasing of the tuned table it plans right, a
qualifier from each family below is appended; the plan must change accordingly or the planner must refuse — the
same plan silently means a qualifier was dropped. The families and their counts are printed; the silent ones left
are bounded at what was measured when the reading ledger came in (agent/planning/said.py: 116 before it)."""

from __future__ import annotations

import pytest

from agent.planning.deterministic import plan
from tests.agent.planning.phrasings import PHRASINGS, Plan
from tests.agent.planning.test_phrasings import judge

FAMILIES = {
    "a condition with a number": " for transactions over $1000",
    "another field's condition": " when account_age_days < 30",
    "a share in another form": " on 0.2 of the rows",
    "a range": " on between 5 and 10 percent of rows",
    "a quoted subset": " for merchant_category 'grocery'",
    "a second change": ", and txn_count_1h x3",
}
SILENT_AT_MOST = 15
"""Measured: 15 of 1,284 variants (e.g. "maxes out at 10k for transactions over $1000", where 10k × 1000 reads as
the cap; a clip restating its bound; "on 20% of rows on 0.2 of the rows", the same share twice)."""


def test_an_appended_qualifier_is_never_dropped_silently(capsys: pytest.CaptureFixture[str]) -> None:
    silent: dict[str, list[str]] = {family: [] for family in FAMILIES}
    total = 0
    for phrasing in PHRASINGS:
        if not isinstance(phrasing.expect, Plan) or phrasing.field is None or judge(phrasing).verdict != "right":
            continue
        base = plan(phrasing.text, phrasing.field)
        for family, tail in FAMILIES.items():
            text = phrasing.text.rstrip("?. ") + tail
            got = plan(text, phrasing.field)
            total += 1
            if got.op is not None and (got.op, got.params, got.fraction) == (base.op, base.params, base.fraction):
                silent[family].append(text)
    with capsys.disabled():
        print("\nmetamorphic families (silent / variants): " + ", ".join(f"{f} {len(s)}" for f, s in silent.items()))
    found = sum(len(s) for s in silent.values())
    assert total >= 1200 and found <= SILENT_AT_MOST, {f: s[:3] for f, s in silent.items() if s}
