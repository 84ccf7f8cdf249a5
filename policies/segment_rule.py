"""The segment rule: a segment (a category, or a quantile bin of a numeric column, holding at least the policy's
min_share of the scored rows) raises the verdict only when its rate is credibly above a band after the
Benjamini-Hochberg correction across every segment tested:

- WARNING when the BH-adjusted one-sided binomial p for "rate > warning band" is < fdr;
- BLOCK when the BH-adjusted one-sided binomial p for "rate > block band" is < fdr.

The rate is the flip rate (binary, multiclass) or the moved share (regression), over the scored rows.
"""

from __future__ import annotations

from policies.metrics import ModelMetrics, SegmentFinding, SegmentSummary
from policies.sections import SegmentRule
from policies.text import pct, share_range, share_setting
from policies.verdicts import Reason, Verdict

_LABELS = {"flip_rate": "flip rate", "moved_share": "moved share"}


def _level(f: SegmentFinding, fdr: float) -> Verdict:
    if f.p_adjusted_block is not None and f.p_adjusted_block < fdr:
        return Verdict.BLOCK
    return Verdict.WARNING if f.p_adjusted < fdr else Verdict.PASS


def _facts(f: SegmentFinding, confidence: float) -> str:
    level = share_setting(confidence)
    return (
        f"segment {f.segment}: {_LABELS[f.metric]} {pct(f.value, 1)} "
        f"({level} CI {share_range(f.ci_low, f.ci_high)}, "
        f"{f.events} of {f.n} scored rows, {pct(f.share, 1)} of them; overall {pct(f.overall_value, 1)})"
    )


def _judged(f: SegmentFinding, level: Verdict, s: SegmentSummary, rule: SegmentRule, confidence: float) -> Reason:
    tested = f"across {s.segments_tested} segments"
    if level is Verdict.BLOCK:
        band, p, p_adj = s.block_band, f.p_value_block, f.p_adjusted_block
        why = f"credibly above the {share_setting(band or 0)} block band"
    else:
        band, p, p_adj = s.warning_band, f.p_value, f.p_adjusted
        above = level is Verdict.WARNING
        why = (
            f"credibly above the {share_setting(band or 0)} warning band"
            if above
            else f"not credibly above the {share_setting(band or 0)} warning band"
        )
    cmp = "<" if level is not Verdict.PASS else ">="
    stats = f"one-sided binomial p {_p(p)}, BH-adjusted p {_p(p_adj)} {cmp} FDR {rule.fdr:g} {tested}"
    return Reason(
        code=f"segment_{level.lower()}",
        severity=level,
        message=f"{_facts(f, confidence)} is {why}: {stats}",
        metric=f"segment_{f.metric}",
        value=f.value,
        threshold=band,
    )


def segment_reasons(m: ModelMetrics, rule: SegmentRule | None, bands: tuple[float, float] | None) -> list[Reason]:
    """One reason for the worst segment; none when the policy has no segment rule or nothing was segmented."""
    s = m.segments
    if s is None or rule is None or bands is None:
        return []
    if (s.warning_band, s.block_band) != bands:
        return [
            Reason(
                code="segment_bands_mismatch",
                severity=Verdict.INCOMPLETE,
                metric="segments",
                message=f"the segment p-values were computed against the bands ({s.warning_band}, {s.block_band}) but "
                f"this policy's are {bands}; recompute the metrics with this policy's segment bands",
            )
        ]
    if not s.findings:
        skipped = f", {len(s.columns_skipped)} skipped" if s.columns_skipped else ""
        return [
            Reason(
                code="segment_pass",
                severity=Verdict.PASS,
                metric="segments",
                message=f"no segment of at least {share_setting(s.min_share)} of the scored rows to test "
                f"({len(s.columns_examined)} columns examined{skipped})",
            )
        ]
    level, worst = max(((_level(f, rule.fdr), f) for f in s.findings), key=lambda lf: (lf[0].severity, lf[1].value))
    return [_judged(worst, level, s, rule, m.confidence)]


def _p(value: float | None) -> str:
    # An exact binomial p that underflows to 0 would read as "impossible"; say how small it is instead.
    if value is None:
        return "not computed"
    return "< 1e-300" if value < 1e-300 else f"= {value:.3g}"
