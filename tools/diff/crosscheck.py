"""What the data shows a changed column underwent, beside what the SQL reading said. The paired rows' before and
after values are classified by the same rule `assess` uses when it re-runs a dataset's SQL (tools/experiment/
rerun.py `classify`: the simplest allowlisted operator mapping every changed row's old value to its new one, and
the share of the rows it would alter that did change). Where a CHANGES file (from `provenance infer-changes`)
declares a mutation of the column, the two are compared: "SQL reading: scale(factor=100); data: scale(factor=100)
on 100 % of rows — agree", or the disagreement, recorded."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict

from policies import pct
from tools.changes.schema import ProposedChange
from tools.experiment.rerun import classify

SHARE_TOLERANCE = 0.02  # a declared fraction and the share the data shows agree within two points


class ColumnReading(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    dataset_urn: str
    column: str
    data: str  # what the paired rows show, e.g. "scale(factor=100) on 34.8% of the rows it alters"
    sql: str | None = None  # the declared mutation, when a CHANGES entry names the column
    agree: bool | None = None  # None: nothing declared to compare with

    def line(self) -> str:
        if self.sql is None:
            return f"{self.column}: data shows {self.data}"
        verdict = "agree" if self.agree else "DISAGREE"
        return f"{self.column}: SQL reading {self.sql}; data {self.data} — {verdict}"


def _params(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(params.items()))


def _same_params(declared: dict[str, Any], seen: dict[str, Any]) -> bool:
    if set(declared) != set(seen):
        return False
    for key, value in declared.items():
        other = seen[key]
        if isinstance(value, int | float) and isinstance(other, int | float):
            if not math.isclose(float(value), float(other), rel_tol=1e-9, abs_tol=1e-12):
                return False
        elif value != other:
            return False
    return True


def read_column(dataset_urn: str, column: str, before: pd.Series, after: pd.Series,
                declared: ProposedChange | None) -> ColumnReading | None:  # fmt: skip
    """The column's reading; None when no paired row changed and nothing was declared."""
    pairs = list(zip(before.tolist(), after.tolist(), strict=True))
    found = classify([(None if _missing(x) else x, None if _missing(y) else y) for x, y in pairs])
    if found is None:
        if declared is None:
            return None
        data, op, share = "no change on the paired rows", None, 0.0
        params: dict[str, Any] = {}
    elif isinstance(found, str):
        data, op, params, share = f"no allowlisted operator: {found}", None, dict[str, Any](), 0.0
    else:
        op, params, share = found
        data = f"{op}({_params(params)}) on {pct(share, 1)} of the rows it alters"
    if declared is None:
        return ColumnReading(dataset_urn=dataset_urn, column=column, data=data)
    sql = f"{declared.op}({_params(declared.params)}) on {pct(declared.fraction, 1)} of rows"
    agree = (
        op == declared.op
        and _same_params(dict(declared.params), params)
        and abs(share - declared.fraction) <= SHARE_TOLERANCE
    )
    return ColumnReading(dataset_urn=dataset_urn, column=column, data=data, sql=sql, agree=agree)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
