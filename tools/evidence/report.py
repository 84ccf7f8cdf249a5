"""report.md: the run's evidence as a Markdown document a risk reviewer can read without the JSON.

Rendering is a pure function of the Evidence (no clock, no file system), so the same evidence always gives
the same report. Number formats live in ``formats`` (filters here), not in the templates, so every number of a
kind looks the same: AUC 3 decimals, AUC differences signed with 4, rates as percentages with 2 decimals, small
p-values in scientific notation, a regressor's errors with 4 significant digits, and None as "n/a". Each task's
metrics have their own template (``templates/metrics_<task>.md.j2``); segments one more.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from policies import Reason
from tools import atomic
from tools.catalog.render import short
from tools.evidence import task_text
from tools.evidence.formats import NA, auc, count, decimal, na, pct, points, pvalue, relative, seconds, sig, signed
from tools.evidence.schema import Evidence
from tools.evidence.store import REPORT_FILE
from tools.evidence.task_views import task_view

TEMPLATE = "report.md.j2"
PLOT_TITLES = {
    "roc": "ROC",
    "shift": "Probability shift",
    "fit": "Predicted vs actual",
    "change": "Prediction change",
    "class_flips": "Flip rate per predicted class",
    "transitions": "Predicted class, baseline to mutated",
}


def cell(value: object) -> str:
    """Text safe inside a Markdown table cell: a raw "|" or newline would split the row."""
    return na(value).replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def code(value: object) -> str:
    """Inline code whose delimiter is longer than any backtick run inside (CommonMark)."""
    text = na(value).replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def as_json(value: object) -> str:
    """Compact, key-sorted JSON (jinja's tojson escapes <, >, & and ' for HTML, which Markdown code shows)."""
    return json.dumps(value, sort_keys=True, default=str)


def table_code(value: object) -> str:
    """Inline code inside a table cell: GFM splits cells on "|" even inside code spans unless escaped."""
    return code(value).replace("|", "\\|")


def fenced(value: object) -> str:
    """A fenced code block that survives backtick fences inside the text (error messages, tracebacks)."""
    text = na(value)
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _failed_rows(value: float) -> str:
    return f"{value:,.0f} failed row" + ("" if value == 1 else "s")


# Reason metrics (the engine's names) that are a share of rows or a relative change, shown as percentages;
# segment_flip_rate / segment_moved_share too (``_is_percent``).
_PERCENT_METRICS = {"flip_rate", "moved_share", "accuracy_drop", "mae_increase", "rmse_increase"}
_PSI_METRICS = {"score_psi", "class_psi", "prediction_psi"}


def _is_percent(metric: str) -> bool:
    return metric in _PERCENT_METRICS or metric.endswith("_relative") or metric.startswith("segment")


def _format_for(metric: str | None, code_name: str) -> tuple[Any, Any]:
    """(value formatter, threshold formatter) for a Reason, by the engine's metric names."""
    if metric == "failure_rate":
        # The engine's failure rule compares the rate with block_rate, but the WARNING/PASS variants carry
        # warning_count (a number of rows) as the threshold.
        return pct, (pct if code_name.endswith("_block") else _failed_rows)
    if metric is not None and _is_percent(metric):
        return pct, pct
    if metric in {"auc_drop", "macro_f1_drop"}:
        return signed, decimal
    if metric in _PSI_METRICS:
        return (lambda v: decimal(v, 3)), (lambda v: decimal(v, 3))
    if metric in {"rows", "positives", "negatives"}:
        return (lambda v: f"{v:,.0f}"), (lambda v: f"{v:,.0f}")
    return (lambda v: f"{v:.4g}"), (lambda v: f"{v:.4g}")


def reason_value(reason: Reason) -> str:
    return NA if reason.value is None else str(_format_for(reason.metric, reason.code)[0](reason.value))


def reason_threshold(reason: Reason) -> str:
    return NA if reason.threshold is None else str(_format_for(reason.metric, reason.code)[1](reason.threshold))


def _finalize(value: object) -> object:
    return NA if value is None else value  # any None the template prints unformatted still reads "n/a"


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(Path(__file__).with_name("templates")),
        undefined=StrictUndefined,  # a renamed Evidence field must fail the tests, not print an empty cell
        autoescape=False,  # Markdown, not HTML; table cells go through |cell instead
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_finalize,
    )
    formatters = {
        "na": na,
        "pct": pct,
        "points": points,
        "sig": sig,
        "ssig": lambda value: sig(value, sign=True),
        "relative": relative,
        "auc": auc,
        "signed": signed,
        "decimal": decimal,
        "pvalue": pvalue,
        "count": count,
        "seconds": seconds,
        "cell": cell,
        "code": code,
        "tcode": table_code,
        "fenced": fenced,
        "json": as_json,
        "short": short,
        "reason_value": reason_value,
        "reason_threshold": reason_threshold,
    }
    env.filters.update(formatters)
    env.globals.update(
        plot_titles=PLOT_TITLES,
        short=short,
        summary_cells=lambda m: task_view(m).cells(),
        class_rows=task_text.class_rows,
        worst_class=task_text.worst_class,
        worst_class_psi=task_text.worst_class_psi,
        finding_line=task_text.finding_line,
        segment_metric=task_text.SEGMENT_METRIC_NAMES,
    )
    return env


# Built once: Environment is safe to share between threads for rendering, and template loading is cached.
_ENV = _environment()


def _context(evidence: Evidence) -> dict[str, Any]:
    failures: dict[str, list[str]] = {}
    for failure in evidence.failures:  # grouped by stage in order of first appearance
        failures.setdefault(failure.stage, []).append(failure.message)
    methods: dict[str, str] = {}
    for model in evidence.models:  # identical across models today; merged so a future per-model method shows
        if model.metrics is not None:
            for key, text in model.metrics.methods.items():
                methods.setdefault(key, text)
    # Every measured model binary: the summary keeps its AUC columns; any other task: columns every task can fill.
    mixed = any(m.metrics is not None and m.metrics.task != "binary" for m in evidence.models)
    confidence = next((m.metrics.confidence for m in evidence.models if m.metrics is not None), 0.95)
    return {
        "e": evidence,
        "failures_by_stage": failures,
        "methods": methods,
        "mixed_tasks": mixed,
        "confidence": confidence,
    }


def render_report(evidence: Evidence) -> str:
    return _ENV.get_template(TEMPLATE).render(_context(evidence))


def write_report(folder: Path, evidence: Evidence) -> None:
    """Write ``folder/report.md`` atomically (temporary file + os.replace).

    Returns None so it fits store.write_run / update_evidence's ``extra`` callback as a lambda.
    """
    atomic.write_atomically(Path(folder) / REPORT_FILE, render_report(evidence).encode("utf-8"))
