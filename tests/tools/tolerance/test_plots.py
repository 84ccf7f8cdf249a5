"""The tolerance figures explain their verdicts: each WARNING or BLOCK dose is drawn under the rule that decided it,
and the legend names every marker, colour, line and band. Read from the matplotlib artists, not from pixels."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure

from policies import Verdict, load_policy
from tools.tolerance.bisection import Bracket, DosePoint, Search
from tools.tolerance.plots import axis_figure, heat_figure, rule_name
from tools.tolerance.schema import AxisResult, ModelScan

POLICY = load_policy().policy


def _axis(name: str, points: list[DosePoint], warning: float | None, block: float | None) -> AxisResult:
    return AxisResult(
        axis=name,
        op="scale",
        unit="factor",
        search=Search(
            brackets={
                "WARNING": Bracket(tolerated=None, reached=warning),
                "BLOCK": Bracket(tolerated=None, reached=block),
            },
            points=points,
            monotone=True,
        ),
        labels={p.dose: f"×{p.dose:g}" for p in points},
    )


def _model(task: str, axes: list[AxisResult]) -> ModelScan:
    return ModelScan(urn="urn:li:mlModel:x", name="m", task=task, column="amount", axes=axes)  # type: ignore[arg-type]


# Doses decided by rules other than the plotted share, as the demo's fraud model and regressor have them: an AUC
# drop and a segment below the flip-rate band, failed rows while the moved share stays at 0.
BINARY = _model(
    "binary",
    [
        _axis(
            "scale_up",
            [
                DosePoint(dose=1.2, verdict=Verdict.PASS, share=0.01, share_low=0.0, share_high=0.02),
                DosePoint(dose=1.5, verdict=Verdict.WARNING, share=0.02, reasons=["segment_warning"]),
                DosePoint(dose=2.0, verdict=Verdict.BLOCK, share=0.04, reasons=["auc_drop_block", "segment_block"]),
                DosePoint(dose=10.0, verdict=Verdict.BLOCK, share=0.5, reasons=["auc_drop_block", "flip_rate_block"]),
            ],
            warning=1.5,
            block=2.0,
        )
    ],
)
REGRESSION = _model(
    "regression",
    [
        _axis(
            "nulls",
            [
                DosePoint(dose=0.001, verdict=Verdict.WARNING, share=0.0, reasons=["inference_failures_warning"]),
                DosePoint(dose=0.01, verdict=Verdict.BLOCK, share=0.0, reasons=["inference_failures_block"]),
            ],
            warning=0.001,
            block=0.01,
        ),
        _axis("scale_up", [DosePoint(dose=2.0, verdict=Verdict.PASS, share=0.0)], warning=None, block=None),
    ],
)


def _drawn(figure: Figure) -> list[tuple[float, float, str]]:
    """(dose, share, label) of every dose marker in the figure's panels."""
    drawn = []
    for axes in figure.axes:
        for collection in axes.collections:
            if isinstance(collection, PathCollection):
                drawn += [(float(x), float(y), collection.get_label()) for x, y in np.asarray(collection.get_offsets())]
    return drawn


def _legend_texts(figure: Figure) -> list[str]:
    return [text.get_text() for legend in figure.legends for text in legend.get_texts()]


@pytest.mark.parametrize("model", [BINARY, REGRESSION], ids=["binary", "regression"])
def test_every_warning_or_block_dose_is_drawn_under_the_rule_that_decided_it(model: ModelScan) -> None:
    for axis in model.axes:
        figure = axis_figure(model, axis, POLICY)
        drawn = _drawn(figure)
        legend = _legend_texts(figure)
        for point in axis.search.points:
            labels = [label for x, y, label in drawn if (x, y) == (point.dose, point.share)]
            assert len(labels) == 1, f"{axis.axis} dose {point.dose}: drawn {labels}"
            if point.verdict == Verdict.PASS:
                assert labels == ["passed"]
                continue
            deciding = {rule_name(code) for code in point.reasons}
            assert labels[0] in deciding, f"dose {point.dose} drawn as {labels[0]}, decided by {deciding}"
            assert any(text.startswith(f"decided by {labels[0]}") for text in legend), legend


def test_the_plotted_share_is_named_as_the_decider_when_it_decided() -> None:
    drawn = _drawn(axis_figure(BINARY, BINARY.axes[0], POLICY))
    assert (10.0, 0.5, "flip rate") in drawn  # decided by the AUC drop and by the flip rate: the plotted one shown
    assert (2.0, 0.04, "AUC drop") in drawn  # below the flip-rate band: the AUC drop decided it


def test_the_legend_names_colours_lines_and_bands_and_the_axes_are_labelled() -> None:
    figure = axis_figure(REGRESSION, REGRESSION.axes[0], POLICY)
    legend = _legend_texts(figure)
    for expected in ("PASS", "WARNING", "BLOCK", "first WARNING dose", "first BLOCK dose", "moved share: 95% CI"):
        assert expected in legend
    assert "decided by failed rows (not plotted)" in legend  # why doses sit at 0 and still BLOCK
    assert any(text.startswith("warning band") for text in legend) and any(t.startswith("block band") for t in legend)
    (panel,) = figure.axes
    assert panel.get_ylabel() == "moved share (95% CI)" and panel.get_xlabel() == "factor"
    assert "by nulls" in figure.get_suptitle()


def test_a_rule_the_panel_does_not_plot_has_its_own_marker() -> None:
    (panel,) = axis_figure(BINARY, BINARY.axes[0], POLICY).axes
    shapes = {c.get_label(): c.get_paths()[0].vertices.tobytes() for c in panel.collections if c.get_label()}
    assert shapes["AUC drop"] != shapes["flip rate"] and shapes["a segment's share"] != shapes["flip rate"]
    assert shapes["passed"] == shapes["flip rate"]  # circles: the plotted share decided, or nothing did


def test_the_heat_map_has_a_colour_bar_with_its_meaning() -> None:
    figure = heat_figure([BINARY, REGRESSION])
    bars = [a for a in figure.axes if a.get_ylabel().startswith("share of the axis's doses tolerated")]
    assert len(bars) == 1
    assert "before WARNING" in figure.get_suptitle()


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("auc_drop_block", "AUC drop"),
        ("flip_rate_warning", "flip rate"),
        ("inference_failures_block", "failed rows"),
        ("segment_block", "a segment's share"),
        ("mae_increase_warning", "MAE increase"),
        ("pinball_loss_increase_block", "pinball loss increase"),
    ],
)
def test_reason_codes_read_as_rule_names(code: str, name: str) -> None:
    assert rule_name(code) == name
