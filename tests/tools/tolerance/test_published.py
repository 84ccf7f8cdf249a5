"""A published map read back: the values `publish.py` writes parse into the thresholds they state, and a change is
reported at or beyond a model's tolerance exactly when its dose reaches a published threshold on its axis."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from policies import Verdict
from tools.evidence.schema import PolicyRecord
from tools.mutations import parse_mutation
from tools.tolerance.bisection import Bracket, DosePoint, Search
from tools.tolerance.doses import axes_for
from tools.tolerance.publish import tolerance_values
from tools.tolerance.published import notes, parse
from tools.tolerance.schema import AxisResult, ModelScan, ScanResult

AXES = {a.name: a for a in axes_for("numeric", pd.Series(np.linspace(0, 250, 500)))}


def axis(name: str, warning: float | None, block: float | None) -> AxisResult:
    grid = AXES[name].grid
    below = lambda d: max((g for g in grid if g < d), default=None)  # noqa: E731
    brackets = {
        level: Bracket(tolerated=below(at) if at else grid[-1], reached=at)
        for level, at in (("WARNING", warning), ("BLOCK", block))
    }
    points = [DosePoint(dose=d, verdict=Verdict.PASS) for d in grid]
    search = Search(brackets=brackets, points=points, monotone=True)  # type: ignore[arg-type]
    return AxisResult(
        axis=name, op=AXES[name].op, unit="", search=search, labels={d: AXES[name].label(d) for d in grid}
    )


def result() -> ScanResult:
    fraud = ModelScan(urn="u1", name="fraud_detector", axes=[axis("scale_up", 1.5, 2.0), axis("nulls", 0.2, 0.5)])
    review = ModelScan(urn="u2", name="review", axes=[axis("shift_up", 0.5, 1.0), axis("rounding", None, None)])
    policy = PolicyRecord(name="default", version=2, sha256="0" * 64, path="p")
    return ScanResult(scan_id="scan-1", dataset_urn="d", field="amount", field_type="NUMBER", models=[fraud, review],
                      policy=policy, conventions_sha256="0" * 64, experiments=1, seconds=1.0)  # fmt: skip


def test_the_published_text_parses_back_into_its_thresholds() -> None:
    found = {(p.model, p.axis, p.level): p.reached for p in parse(tolerance_values(result()))}
    std = float(np.linspace(0, 250, 500).std())
    assert (
        found[("fraud_detector", "scale_up", "WARNING")] == 1.5 and found[("fraud_detector", "nulls", "BLOCK")] == 0.5
    )
    assert found[("review", "shift_up", "BLOCK")] == pytest.approx(1.0 * std, rel=1e-3)  # the absolute offset
    assert not any(axis == "rounding" for _, axis, _ in found)  # never reached: nothing to cite


@pytest.mark.parametrize(
    ("op", "params", "fraction", "expected"),
    [
        ("scale", {"factor": 100}, 1.0, {"fraud_detector": "BLOCK from ×2"}),
        ("scale", {"factor": 1.6}, 1.0, {"fraud_detector": "WARNING from ×1.5"}),
        ("scale", {"factor": 1.4}, 1.0, {}),
        ("scale", {"factor": 100}, 0.5, {}),  # part of the rows: no axis measured that
        ("null_inject", {}, 0.3, {"fraud_detector": "WARNING from 20% nulls"}),
        ("shift", {"offset": 500.0}, 1.0, {"review": "BLOCK from +1σ"}),
        ("clip", {"upper": 10.0}, 1.0, {}),
    ],
)
def test_a_change_is_cited_exactly_when_it_reaches_a_published_threshold(
    op: str, params: dict[str, object], fraction: float, expected: dict[str, str]
) -> None:
    said = notes(tolerance_values(result()), parse_mutation(op, params, fraction=fraction), "amount")
    assert {n.split(":")[0]: n for n in said}.keys() == expected.keys()
    for note in said:
        model = note.split(":")[0]
        assert expected[model] in note and "scan scan-1" in note and note.endswith("the experiment decides")


def test_what_a_scan_could_not_say_is_incomplete_never_none() -> None:
    from tools.catalog.coverage import Coverage

    complete = result()
    assert complete.gaps() == []
    unread = complete.model_copy(update={"models": [], "coverage": Coverage(unreadable=["get_lineage of x: timeout"])})
    assert unread.empty_text().startswith("No production model found, but the lineage could not be read completely")
    assert unread.gaps() == [
        "INCOMPLETE: the lineage could not be read completely, so models downstream may be missing: "
        "get_lineage of x: timeout"
    ]
    assert complete.model_copy(update={"models": []}).empty_text().startswith("No production model depends")
    holes = [ModelScan(urn="u3", name="m3", not_scanned="missing_binding: no artifact")]
    stopped = axis("nulls", 0.2, 0.5)
    stopped.search.incomplete = "dose 1: INCOMPLETE (too_few_rows)"
    holes.append(ModelScan(urn="u4", name="m4", axes=[stopped]))
    assert complete.model_copy(update={"models": holes}).gaps() == [
        "INCOMPLETE: m3 not scanned: missing_binding: no artifact",
        "INCOMPLETE: m4 nulls: dose 1: INCOMPLETE (too_few_rows)",
    ]
