"""Writing a scan's evidence: `$PROVENANCE_HOME/scans/<scan_id>/` with scan.json, report.md and the plots, staged in
a hidden folder and renamed into place whole (as runs are), the plots' sha256s recorded in scan.json."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from policies import Policy
from tools import atomic
from tools.evidence.build import slug
from tools.tolerance.bisection import LEVELS
from tools.tolerance.plots import axis_figure_name, axis_figures, heat_map
from tools.tolerance.schema import ModelScan, ScanResult

SCAN_FILE = "scan.json"
REPORT_FILE = "report.md"
HEAT_MAP = "tolerance-heatmap.png"


def scans_dir(home: Path) -> Path:
    return home / "scans"


def write_scan(home: Path, result: ScanResult, policy: Policy) -> tuple[Path, ScanResult]:
    final = scans_dir(home) / result.scan_id
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{result.scan_id}."))
    try:
        plots: dict[str, str] = {}
        for model in result.models:
            for name in axis_figures(model, policy, staging, slug(model.name)):
                plots[name] = _sha256(staging / name)
        if any(m.axes for m in result.models):
            heat_map(result.models, staging / HEAT_MAP)
            plots[HEAT_MAP] = _sha256(staging / HEAT_MAP)
        result = result.model_copy(update={"plots": plots})
        atomic.write_atomically(staging / REPORT_FILE, report_markdown(result).encode())
        atomic.write_atomically(staging / SCAN_FILE, result.model_dump_json(indent=2).encode())
        os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final, result


def combined_heat_map(home: Path, results: list[ScanResult]) -> Path | None:
    """Columns × axes over the scans of one command (`scan --model`, or `--dataset` without `--field`): one row per
    column and model, next to the scans as `scans/<first scan id>-columns.png`; None when nothing was scanned."""
    rows = [(f"{r.field} · {m.name}", m) for r in results for m in r.models if m.axes]
    if not rows:
        return None
    path = scans_dir(home) / f"{results[0].scan_id}-columns.png"
    heat_map([m for _, m in rows], path, [label for label, _ in rows])
    return path


def update_scan(folder: Path, result: ScanResult) -> None:
    """scan.json rewritten (atomically) with the publication's outcome; the plots and report stay."""
    atomic.write_atomically(folder / SCAN_FILE, result.model_dump_json(indent=2).encode())


def read_scan(folder: Path) -> ScanResult:
    return ScanResult.model_validate_json((folder / SCAN_FILE).read_text())


def report_markdown(result: ScanResult) -> str:
    dataset = result.dataset_urn.split(",")[1] if result.dataset_urn.count(",") >= 2 else result.dataset_urn
    lines = [
        f"# Tolerance map: `{dataset}.{result.field}`",
        "",
        f"Scan `{result.scan_id}` of {result.created_at}; policy {result.policy.name} v{result.policy.version} "
        f"(sha256 `{result.policy.sha256[:12]}…`), conventions sha256 `{result.conventions_sha256[:12]}…`; "
        f"{result.experiments} doses measured in {result.seconds:.1f} s.",
        "",
        "Each threshold is a bracket between two tested doses of a fixed grid: the smallest dose at which the "
        "policy's verdict reached the level, and the largest below it that did not. Doses in between were not "
        "tested.",
    ]
    if gaps := result.gaps():
        lines += ["", "## Incomplete", *(f"- {gap}" for gap in gaps)]
    if not result.models:
        lines += ["", result.empty_text()]
    for model in result.models:
        lines += ["", *_model_section(model)]
    if result.not_tested:
        lines += ["", "## Not scanned (not in production)", *(f"- {n.name}: {n.reason}" for n in result.not_tested)]
    if result.coverage is not None:
        lines += ["", "## Coverage", *(f"- {line}" for line in result.coverage.lines())]
    if HEAT_MAP in result.plots:
        lines += ["", "## Heat map", "", f"![tolerance heat map]({HEAT_MAP})"]
    lines += ["", "## Files", *(f"- `{name}` sha256 `{digest}`" for name, digest in sorted(result.plots.items()))]
    return "\n".join(lines) + "\n"


def _model_section(model: ModelScan) -> list[str]:
    head = f"## {model.name}" + (f" ({model.task}, input `{model.column}`)" if model.task else "")
    if model.not_scanned:
        return [head, "", f"**INCOMPLETE**: not scanned — {model.not_scanned}"]
    lines = [
        head,
        "",
        f"`{model.urn}`; artifact sha256 `{model.artifact_sha256}`, evaluation data sha256 "
        f"`{model.eval_data_sha256}`, {model.rows} rows.",
        "",
        "| axis | BLOCK | WARNING | doses tested | monotone |",
        "|---|---|---|---:|---|",
    ]
    for axis in model.axes:
        block, warning = (axis.bracket_text(level) for level in reversed(LEVELS))
        monotone = "yes" if axis.search.monotone else "**no**: a larger dose gave a milder verdict"
        lines.append(f"| {axis.axis} | {block} | {warning} | {len(axis.search.points)} | {monotone} |")
    lines += [""] + [f"![{model.name}: {a.axis}]({axis_figure_name(slug(model.name), a)})" for a in model.axes]
    return lines


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def chat_figures(folder: Path) -> list[Path]:
    """What the chat shows of a scan: the heat map, then each model's figures in the scan's order of models and
    axes (scan.json's `plots`)."""
    names = list(read_scan(folder).plots)
    return [folder / name for name in sorted(names, key=lambda name: name != HEAT_MAP)]
