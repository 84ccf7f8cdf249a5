"""The verdict card's metric tables: one table per task present in the run, each with that task's own columns
(its view's, tools/tasks/: a regressor's row never shows AUC) and its models' confidence intervals under it, the
moved-prediction tolerance under a regression table, and one line per model on its worst segment."""

from __future__ import annotations

from agent.chat.messages import plain
from policies import SegmentSummary
from tools import task_registry
from tools.evidence.formats import pct, share_range, sig
from tools.evidence.schema import ModelEvidence
from tools.evidence.task_text import EXCEEDS_TEXT, SEGMENT_METRIC_NAMES
from tools.evidence.task_views import Cell, task_view


def _groups(models: list[ModelEvidence]) -> dict[str, list[ModelEvidence]]:
    """Models by task, the registered tasks' order; a model of unknown task (not measured, not loaded) joins the
    first table."""
    known: dict[str, list[ModelEvidence]] = {}
    unknown: list[ModelEvidence] = []
    for model in models:
        task = model.measured_task
        (known.setdefault(task, []) if task is not None else unknown).append(model)
    order = [*task_registry.names(), *sorted(set(known) - set(task_registry.names()))]
    groups = {task: known[task] for task in order if task in known}
    if unknown:
        first = next(iter(groups), "binary")
        groups[first] = [*groups.get(first, []), *unknown]
    return groups


def _cells(model: ModelEvidence, task: str) -> list[Cell] | None:
    m = model.metrics
    return None if m is None or m.task != task else task_view(m).table_cells(plain)


def metrics_row(model: ModelEvidence, task: str, columns: int) -> str:
    head = f"| {plain(model.name)} | **{model.verdict}** |"  # text: an emoji is an empty box without an emoji font
    cells = _cells(model, task)
    if cells is None:
        return head + " not measured |" + " |" * (columns - 1)
    return head + "".join(f" {_unbroken(cell.value)} |" for cell in cells)


def _unbroken(value: str) -> str:
    """ "> 99.9%" kept on one line in a narrow column (it wrapped after the ">")."""
    return value.replace("> ", ">\u00a0").replace("< ", "<\u00a0")


def intervals_line(model: ModelEvidence, task: str, header: list[str], confidence: str) -> str | None:
    """The model's confidence intervals, one line under the table: in the cells they pushed it past the chat's width
    ("> 99.9% (99.910% to 99.996%)" wrapped over five lines)."""
    cells = _cells(model, task)
    shown = [f"{name} {cell.interval}" for name, cell in zip(header, cells or [], strict=False) if cell.interval]
    return f"- {plain(model.name)}, {confidence} CI: " + "; ".join(shown) if shown else None


def _header(task: str, group: list[ModelEvidence]) -> list[str]:
    """The task's columns, from the view of its first measured model (a table's models share their task)."""
    measured = next((m.metrics for m in group if m.metrics is not None and m.metrics.task == task), None)
    if measured is None:
        return ["Measured"]
    return task_view(measured).table_header()


def num(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


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
        f"({share_range(f.ci_low, f.ci_high)}) "
        f"vs {pct(f.overall_value, 1)} overall, BH p {_p(p_adjusted)}, {EXCEEDS_TEXT[f.exceeds]}; {tested}"
    )


def metric_tables(models: list[ModelEvidence], confidence: float) -> list[str]:
    """Markdown lines: a table per task present, the regression tolerance notes, and the worst segments."""
    lines: list[str] = []
    level = f"{confidence:.0%}"
    for task, group in _groups(models).items():
        header = _header(task, group)
        lines += [
            "",
            "| Model | Verdict | " + " | ".join(header) + " |",
            "|---" * (len(header) + 2) + "|",
            *(metrics_row(model, task, len(header)) for model in group),
        ]
        intervals = [line for model in group if (line := intervals_line(model, task, header, level))]
        lines += ["", *intervals] if intervals else []
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
