"""Reading a published tolerance map back (the column's `io.provenance.tolerance` values, publish.py) and saying
whether a proposed change lies beyond it — before the experiment ends. The experiment stays the judge: this only
says what an earlier scan found, with its scan id and policy, so a person sees it early.

The values are the text `publish.py` writes; each threshold's dose is read back from its label, which `doses.py`
writes from the dose ("×1.5", "÷1.2", "20% nulls", "rounded to 10", "+0.5σ (+62.7)", "5% unseen category").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from tools.mutations import Mutation

_NUMBER = r"[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?"
_LABELS: dict[str, str] = {
    "scale_up": rf"×({_NUMBER})",
    "scale_down": rf"÷({_NUMBER})",
    "nulls": rf"({_NUMBER})% nulls",
    "unseen": rf"({_NUMBER})% unseen category",
    "rounding": rf"rounded to ({_NUMBER})",
    "shift_up": rf"\+{_NUMBER}σ \(\+({_NUMBER})\)",
    "shift_down": rf"-{_NUMBER}σ \(-({_NUMBER})\)",
}
_SHARE_AXES = ("nulls", "unseen")


@dataclass(frozen=True)
class Published:
    model: str
    axis: str
    level: str  # WARNING | BLOCK
    reached: float  # the dose (in the mutation's own terms: factor, divisor, share, step, absolute offset)
    label: str
    provenance: str  # "scanned 2026-12-05, policy default v2, scan scan-…"


def parse(values: list[str]) -> list[Published]:
    """Every threshold the published values state that was reached on the scan's grid."""
    found = []
    for value in values:
        model, _, rest = value.partition(": ")
        body, _, provenance = rest.rpartition("; scanned ")
        for part in body.split("; "):
            axis, _, text = part.partition(" ")
            pattern = _LABELS.get(axis)
            if pattern is None:
                continue
            for level in ("BLOCK", "WARNING"):
                match = re.search(rf"{level} from ({pattern})", text)
                if match:
                    dose = float(match.group(2))
                    found.append(
                        Published(
                            model=model,
                            axis=axis,
                            level=level,
                            reached=dose / 100 if axis in _SHARE_AXES else dose,
                            label=match.group(1),
                            provenance=f"scanned {provenance}" if provenance else "",
                        )
                    )
    return found


def mutation_dose(mutation: Mutation) -> tuple[str, float] | None:
    """The scan axis and dose a proposed change corresponds to; None when no axis measures it the same way (a
    change on part of the rows, a clip, a category remap…)."""
    params = mutation.model_dump()
    op, fraction = params["op"], params.get("fraction", 1.0)
    if op == "null_inject":
        return "nulls", fraction
    if op == "unseen_category":
        return "unseen", fraction
    if fraction != 1.0:
        return None
    if op == "scale" and params["factor"] > 0 and params["factor"] != 1:
        factor = params["factor"]
        return ("scale_up", factor) if factor > 1 else ("scale_down", 1 / factor)
    if op == "round":
        return "rounding", 10.0 ** -params["decimals"]
    if op == "shift" and params["offset"] != 0:
        return ("shift_up" if params["offset"] > 0 else "shift_down"), abs(params["offset"])
    return None


def notes(values: list[str], mutation: Mutation, field: str) -> list[str]:
    """One line per model whose published map has a threshold on this change's axis that the change reaches."""
    located = mutation_dose(mutation)
    if located is None:
        return []
    axis, dose = located
    worst: dict[str, Published] = {}
    for threshold in parse(values):
        if threshold.axis == axis and dose >= threshold.reached * (1 - 1e-9) and not math.isnan(dose):
            if threshold.model not in worst or threshold.level == "BLOCK":
                worst[threshold.model] = threshold
    return [
        f"{t.model}: {mutation.describe(field)} is at or beyond its published tolerance ({t.axis}: {t.level} from "
        f"{t.label}; {t.provenance}); the experiment decides"
        for t in worst.values()
    ]
