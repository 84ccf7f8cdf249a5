"""Segments: BH, Wilson and the binomial test against scipy; column selection, bins, shares and skips by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, false_discovery_control

from policies.sections import SegmentRule
from tools.experiment.segments import (
    DEFAULT_SEGMENT_RULE,
    SegmentGroups,
    benjamini_hochberg,
    binomial_greater_p,
    segment_analysis,
    wilson_bounds,
)


@pytest.mark.parametrize("seed", range(5))
def test_benjamini_hochberg_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.random(40), rng.random(10) * 1e-4, [0.05, 0.05, 1.0]])
    rng.shuffle(p)
    np.testing.assert_allclose(benjamini_hochberg(p), false_discovery_control(p, method="bh"), rtol=1e-12)


def test_benjamini_hochberg_hand_example() -> None:
    # sorted p 0.01, 0.02, 0.03, 0.5 with m = 4: 0.04, 0.04, 0.04 (monotone from the top), 0.5
    assert benjamini_hochberg(np.array([0.5, 0.03, 0.01, 0.02])).tolist() == pytest.approx([0.5, 0.04, 0.04, 0.04])
    assert benjamini_hochberg(np.array([])).tolist() == []


def test_wilson_bounds_match_binomtest() -> None:
    cases = [(0, 10), (10, 10), (3, 10), (1, 200), (57, 1000), (999, 1000), (0, 1), (1, 1)]
    k, n = np.array([c[0] for c in cases]), np.array([c[1] for c in cases])
    for confidence in (0.9, 0.95, 0.99):
        low, high = wilson_bounds(k, n, confidence)
        for i, (events, rows) in enumerate(cases):
            ci = binomtest(events, rows).proportion_ci(confidence_level=confidence, method="wilson")
            assert (low[i], high[i]) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_binomial_p_matches_binomtest_greater() -> None:
    for events, rows, rate in [(0, 50, 0.05), (5, 50, 0.05), (30, 200, 0.05), (30, 200, 0.10), (200, 200, 0.1)]:
        expected = binomtest(events, rows, rate, alternative="greater").pvalue
        assert binomial_greater_p(np.array([events]), np.array([rows]), rate)[0] == pytest.approx(expected, rel=1e-9)


def hot_region(n: int = 4000, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Overall flip rate ~3 %, below the 5 % warning band; region=north (10 % of rows) flips at ~25 %."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "east", "west", "centre"], n, p=[0.1, 0.3, 0.3, 0.2, 0.1])
    rate = np.where(region == "north", 0.25, 0.005)
    events = rng.random(n) < rate
    frame = pd.DataFrame({"region": region, "amount": rng.gamma(2.0, 50.0, n), "ok_flag": rng.random(n) < 0.5})
    return frame, events


def test_one_hot_region_exceeds_the_block_band_after_bh() -> None:
    frame, events = hot_region()
    ok = np.ones(len(frame), dtype=bool)
    s = segment_analysis(frame, ok, events, metric="flip_rate", bands=(0.05, 0.10))
    assert events.mean() < 0.05 and s.worst is not None
    assert s.worst.segment == "region=north" and s.worst.exceeds == "block" and s.worst.column == "region"
    north = frame["region"].to_numpy() == "north"
    assert (s.worst.n, s.worst.events) == (int(north.sum()), int(events[north].sum()))
    assert s.worst.value == pytest.approx(events[north].mean()) and s.worst.overall_value == pytest.approx(
        events.mean()
    )
    assert s.worst.share == pytest.approx(north.mean())
    # an independent recomputation of every tested segment's p-value, then BH over all of them
    tested = {f.segment for f in s.findings}
    assert len(s.findings) == min(10, s.segments_tested)
    assert s.columns_examined == ["region", "amount", "ok_flag"] and s.columns_skipped == {}
    assert s.segments_tested == 5 + 4 + 2
    masks = {f"region={r}": frame["region"].to_numpy() == r for r in ["north", "south", "east", "west", "centre"]}
    masks |= {f"ok_flag={v}": frame["ok_flag"].to_numpy() == v for v in (True, False)}
    edges = np.quantile(frame["amount"], [0.25, 0.5, 0.75])
    codes = np.searchsorted(edges, frame["amount"], side="right")
    amount_labels = sorted(f.segment for f in s.findings if f.column == "amount")
    assert len(amount_labels) == 4 and all(label.startswith("amount in [") for label in amount_labels)
    raw = [binomtest(int(events[m].sum()), int(m.sum()), 0.05, alternative="greater").pvalue for m in masks.values()]
    raw += [binomtest(int(events[codes == b].sum()), int((codes == b).sum()), 0.05, alternative="greater").pvalue
            for b in range(4)]  # fmt: skip
    adjusted = dict(zip([*masks, *range(4)], false_discovery_control(raw, method="bh"), strict=True))
    for f in s.findings:
        if f.segment in masks:
            assert f.p_adjusted == pytest.approx(adjusted[f.segment], rel=1e-9), f.segment
    assert "region=north" in tested and s.fdr == 0.05 and (s.warning_band, s.block_band) == (0.05, 0.10)
    others = [f for f in s.findings if f.segment != "region=north"]
    assert all(f.exceeds == "none" for f in others)


def test_numeric_bins_are_quantile_bins_with_closed_last_bin() -> None:
    values = np.arange(100, dtype=float)  # quartile edges 24.75, 49.5, 74.25
    events = np.zeros(100, dtype=bool)
    s = segment_analysis(pd.DataFrame({"x": values}), np.ones(100, dtype=bool), events, metric="flip_rate")
    by_label = {f.segment: f.n for f in s.findings}
    assert by_label == {
        "x in [0, 24.75)": 25,
        "x in [24.75, 49.5)": 25,
        "x in [49.5, 74.25)": 25,
        "x in [74.25, 99]": 25,
    }


def test_missing_values_are_a_segment_and_failed_rows_are_excluded() -> None:
    n = 1000
    frame = pd.DataFrame({"city": ["a"] * 400 + ["b"] * 400 + [None] * 200, "v": [1.0] * 800 + [np.nan] * 200})
    ok = np.ones(n, dtype=bool)
    ok[:100] = False  # failed rows: not in any segment's count
    events = np.zeros(900, dtype=bool)
    events[-200:] = True  # every scored row with a missing city flipped
    s = segment_analysis(frame, ok, events, metric="flip_rate")
    counts = {f.segment: (f.n, f.events) for f in s.findings}
    assert counts["city=a"] == (300, 0) and counts["city=b"] == (400, 0) and counts["city is missing"] == (200, 200)
    assert counts["v is missing"] == (200, 200) and "v in [1, 1]" in counts
    assert s.worst is not None and s.worst.exceeds == "block"


def test_skips_are_explained() -> None:
    n = 400
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "id": [f"row-{i}" for i in range(n)],  # identifier-like
            "constant": ["same"] * n,
            "when": pd.date_range("2026-01-01", periods=n, freq="h"),
            "kind": rng.choice(["x", "y"], n),
            "late": rng.choice(["p", "q"], n),
        }
    )
    rule = SegmentRule(min_share=0.05, fdr=0.05, numeric_bins=4, max_columns=1, max_categories=50)
    s = segment_analysis(frame, np.ones(n, dtype=bool), np.zeros(n, dtype=bool), metric="flip_rate", rule=rule)
    assert s.columns_examined == ["kind"]
    assert "identifier-like" in s.columns_skipped["id"] and s.columns_skipped["constant"] == "a single value"
    assert "neither categorical nor numeric" in s.columns_skipped["when"]
    assert "max_columns = 1" in s.columns_skipped["late"]


def test_segments_below_min_share_are_not_tested() -> None:
    n = 1000
    frame = pd.DataFrame({"tier": ["big"] * 960 + ["small"] * 40})  # small holds 4 % < 5 %
    events = np.r_[np.zeros(960, dtype=bool), np.ones(40, dtype=bool)]
    s = segment_analysis(frame, np.ones(n, dtype=bool), events, metric="flip_rate")
    assert [f.segment for f in s.findings] == ["tier=big"] and s.segments_tested == 1
    assert s.worst is not None and s.worst.exceeds == "none"


def test_no_scored_rows_tests_nothing() -> None:
    frame = pd.DataFrame({"tier": ["a", "b"] * 50})
    s = segment_analysis(frame, np.zeros(100, dtype=bool), np.zeros(0, dtype=bool), metric="moved_share")
    assert s.segments_tested == 0 and s.worst is None and s.columns_skipped == {"tier": "no scored rows"}


def test_shape_mismatches_name_the_fix() -> None:
    frame = pd.DataFrame({"tier": ["a", "b"] * 50})
    with pytest.raises(ValueError, match="pass the evaluation rows"):
        segment_analysis(frame, np.ones(99, dtype=bool), np.zeros(99, dtype=bool), metric="flip_rate")
    with pytest.raises(ValueError, match="one event per scored row"):
        segment_analysis(frame, np.ones(100, dtype=bool), np.zeros(98, dtype=bool), metric="flip_rate")


def test_default_rule_is_default_v2s() -> None:
    from policies import load_policy

    assert load_policy().policy.segments == DEFAULT_SEGMENT_RULE


def test_prepared_groups_give_the_same_analysis_with_failed_rows() -> None:
    rng = np.random.default_rng(5)
    n = 4000
    frame = pd.DataFrame(
        {
            "region": pd.Series(rng.choice(["north", "south", "east", None], n), dtype="str"),
            "amount": np.where(rng.random(n) < 0.05, np.nan, rng.gamma(2.0, 30.0, n)),
            "count": rng.integers(0, 9, n),
            "id": [f"r{i}" for i in range(n)],
        }
    )
    ok = rng.random(n) > 0.1
    events = rng.random(int(ok.sum())) < 0.08
    plain = segment_analysis(frame, ok, events, metric="flip_rate")
    groups = SegmentGroups(frame, DEFAULT_SEGMENT_RULE).prepare()
    assert segment_analysis(frame, ok, events, metric="flip_rate", groups=groups) == plain
    assert "identifier-like" in plain.columns_skipped["id"]
    scored = frame[ok].assign(event=events)
    by_region = scored.groupby(scored["region"].fillna("<missing>"))["event"].agg(["size", "sum"])
    found = {f.segment: (f.n, f.events) for f in segment_analysis(
        frame, ok, events, metric="flip_rate", rule=DEFAULT_SEGMENT_RULE.model_copy(update={"max_columns": 1})
    ).findings}  # fmt: skip
    expected = {
        ("region is missing" if value == "<missing>" else f"region={value}"): (int(row["size"]), int(row["sum"]))
        for value, row in by_region.iterrows()
    }
    assert found == expected


def test_groups_from_another_frame_are_refused() -> None:
    frame = pd.DataFrame({"tier": ["a", "b"] * 50})
    groups = SegmentGroups(frame.copy())
    with pytest.raises(ValueError, match="another frame"):
        segment_analysis(frame, np.ones(100, dtype=bool), np.zeros(100, dtype=bool), metric="flip_rate", groups=groups)


def test_a_constant_numeric_column_is_a_single_value() -> None:
    frame = pd.DataFrame({"flat": np.full(200, 3.0), "kind": ["x", "y"] * 100})
    s = segment_analysis(frame, np.ones(200, dtype=bool), np.zeros(200, dtype=bool), metric="flip_rate")
    assert s.columns_skipped == {"flat": "a single value"} and s.columns_examined == ["kind"]
