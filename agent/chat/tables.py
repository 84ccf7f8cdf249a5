"""The verdict card's metric tables: one table per task present in the run, each with that task's own columns
(a regressor's row never shows AUC), the moved-prediction tolerance under a regression table, and one line per
model on its worst segment."""

from __future__ import annotations

from collections.abc import Callable

from agent.chat.messages import plain
from policies import ModelMetrics, SegmentSummary, Task
from tools.evidence.formats import pct, points, relative, share_range, sig
from tools.evidence.schema import ModelEvidence
from tools.evidence.task_text import EXCEEDS_TEXT, SEGMENT_METRIC_NAMES, worst_class, worst_class_psi
from tools.evidence.task_views import parts

TASK_ORDER: tuple[Task, ...] = ("binary", "multiclass", "regression")


def num(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


def _ci(low: float | None, high: float | None, fmt: Callable[[float | None], str]) -> str:
    return f"({fmt(low)} to {fmt(high)})"


def _binary(m: ModelMetrics) -> list[str]:
    flips = f"{pct(m.flip_rate, 1)} ({share_range(m.flip_rate_ci_low, m.flip_rate_ci_high)})"
    a = m.binary.auc if m.binary is not None else None
    before, after, change, low, high = parts(a)
    auc = f"{num(before)} → {num(after)}"
    delta = f"{num(change, '+.3f')} ({num(low, '+.3f')} to {num(high, '+.3f')})"
    p_value = num(None if a is None else a.p_value, ".2g")
    return [flips, auc, f"{delta}, p = {p_value}", num(m.psi, ".2f"), pct(m.failure_rate, 1)]


def _regression(m: ModelMetrics) -> list[str]:
    r = m.regression
    if r is None:
        return ["n/a"] * 5 + [pct(m.failure_rate, 1)]

    def signed(value: float | None) -> str:
        return sig(value, sign=True)

    return [
        f"{pct(r.moved_share, 1)} ({share_range(r.moved_share_ci_low, r.moved_share_ci_high)})",
        f"{sig(r.mae.baseline)} → {sig(r.mae.mutated)}",
        f"{signed(r.mae.delta)} {_ci(r.mae.ci_low, r.mae.ci_high, signed)}, {relative(r.mae.relative)}",
        f"{signed(r.rmse.delta)} {_ci(r.rmse.ci_low, r.rmse.ci_high, signed)}, {relative(r.rmse.relative)}",
        num(r.prediction_psi, ".2f"),
        pct(m.failure_rate, 1),
    ]


def _multiclass(m: ModelMetrics) -> list[str]:
    mc = m.multiclass
    flips = f"{pct(m.flip_rate, 1)} ({share_range(m.flip_rate_ci_low, m.flip_rate_ci_high)})"
    if mc is None:
        return [flips] + ["n/a"] * 5 + [pct(m.failure_rate, 1)]
    worst, psi = worst_class(mc), worst_class_psi(mc)

    def f1(value: float | None) -> str:
        return num(value, "+.3f")

    return [
        flips,
        f"{pct(mc.accuracy.baseline, 1)} → {pct(mc.accuracy.mutated, 1)}",
        f"{points(mc.accuracy.delta)} {_ci(mc.accuracy.ci_low, mc.accuracy.ci_high, points)}",
        f"{f1(mc.macro_f1.delta)} {_ci(mc.macro_f1.ci_low, mc.macro_f1.ci_high, f1)}",
        f"{plain(worst[0])} {pct(worst[1], 1)}" if worst else "n/a",
        f"{num(psi[1], '.2f')} ({plain(psi[0])})" if psi else "n/a",
        pct(m.failure_rate, 1),
    ]


_HEADERS: dict[Task, Callable[[str], list[str]]] = {
    "binary": lambda c: [f"Flip rate ({c} CI)", "AUC before → after", f"ΔAUC ({c} CI)", "Score PSI", "Failed rows"],
    "multiclass": lambda c: [
        f"Argmax flips ({c} CI)",
        "Accuracy before → after",
        f"ΔAccuracy ({c} CI)",
        f"ΔMacro-F1 ({c} CI)",
        "Worst class flips",
        "Class PSI (max)",
        "Failed rows",
    ],
    "regression": lambda c: [
        f"Moved ({c} CI)",
        "MAE before → after",
        f"ΔMAE ({c} CI)",
        f"ΔRMSE ({c} CI)",
        "Prediction PSI",
        "Failed rows",
    ],
}
_CELLS: dict[Task, Callable[[ModelMetrics], list[str]]] = {
    "binary": _binary,
    "multiclass": _multiclass,
    "regression": _regression,
}


def _groups(models: list[ModelEvidence]) -> dict[Task, list[ModelEvidence]]:
    """Models by task in TASK_ORDER; a model of unknown task (not measured, not loaded) joins the first table."""
    known: dict[Task, list[ModelEvidence]] = {}
    unknown: list[ModelEvidence] = []
    for model in models:
        task = model.measured_task
        (known.setdefault(task, []) if task is not None else unknown).append(model)
    groups = {task: known[task] for task in TASK_ORDER if task in known}
    if unknown:
        first: Task = next(iter(groups), "binary")
        groups[first] = [*groups.get(first, []), *unknown]
    return groups


def metrics_row(model: ModelEvidence, task: Task, columns: int) -> str:
    head = f"| {plain(model.name)} | **{model.verdict}** |"  # text: an emoji is an empty box without an emoji font
    m = model.metrics
    if m is None or m.task != task:
        return head + " not measured |" + " |" * (columns - 1)
    return head + "".join(f" {cell} |" for cell in _CELLS[task](m))


def _p(value: float | None) -> str:
    # An underflowed p of 0 would read as certainty.
    return "< 1e-300" if value == 0 else f"= {num(value, '.2g')}"


def segment_item(s: SegmentSummary) -> str:
    """The worst segment in one short line: its rate with the interval against the overall rate, the
    Benjamini-Hochberg adjusted p-value of the band it is judged against, and how many segments were tested."""
    tested = f"{s.segments_tested} segments tested"
    f = s.worst
    if f is None:
        return plain(f"no segment of at least {s.min_share:.0%} of rows; {tested}")
    block = f.exceeds == "block" and f.p_adjusted_block is not None
    p_adjusted = f.p_adjusted_block if block else f.p_adjusted
    metric = SEGMENT_METRIC_NAMES.get(f.metric, f.metric)
    return plain(
        f"{f.segment} ({pct(f.share, 1)} of rows): {metric} {pct(f.value, 1)} "
        f"({pct(f.ci_low, 1)} – {pct(f.ci_high, 1)}) "
        f"vs {pct(f.overall_value, 1)} overall, BH p {_p(p_adjusted)}, {EXCEEDS_TEXT[f.exceeds]}; {tested}"
    )


def metric_tables(models: list[ModelEvidence], confidence: float) -> list[str]:
    """Markdown lines: a table per task present, the regression tolerance notes, and the worst segments."""
    lines: list[str] = []
    for task, group in _groups(models).items():
        header = _HEADERS[task](f"{confidence:.0%}")
        lines += [
            "",
            "| Model | Verdict | " + " | ".join(header) + " |",
            "|---" * (len(header) + 2) + "|",
            *(metrics_row(model, task, len(header)) for model in group),
        ]
        if task == "regression":
            notes = [
                f"- *moved* for {plain(model.name)}: \\|change\\| \\> {plain(sig(r.tolerance))} "
                f"\\({plain(r.tolerance_basis)}\\)"
                for model in group
                if model.metrics is not None and (r := model.metrics.regression) is not None
            ]
            lines += ["", *notes] if notes else []
    segments = [
        f"- **{plain(model.name)}**: {segment_item(model.metrics.segments)}"
        for model in models
        if model.metrics is not None and model.metrics.segments is not None
    ]
    if segments:
        lines += ["", "**Segments**", *segments]
    return lines
