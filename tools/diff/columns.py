"""A data diff of the columns a model reads, on the paired rows: the share of values changed, mean / std / nulls
before → after for numbers, and the most frequent changes for categories — the reason a reviewer looks for."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

_TOP = 3  # category changes listed


class ColumnDiff(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    column: str
    rows: int
    changed: int  # rows whose value differs (a NULL on one side only counts; NULL on both does not)
    nulls_before: int
    nulls_after: int
    mean_before: float | None = None  # numbers only
    mean_after: float | None = None
    std_before: float | None = None
    std_after: float | None = None
    top_changes: list[str] = []  # categories: "a → b: 120 rows"

    @property
    def changed_share(self) -> float:
        return self.changed / self.rows if self.rows else 0.0

    def line(self) -> str:
        from policies import pct

        text = f"{self.column}: {pct(self.changed_share, 1)} of {self.rows:,} rows changed"
        if self.mean_before is not None and self.mean_after is not None:
            text += f"; mean {self.mean_before:.4g} → {self.mean_after:.4g}"
            if self.std_before is not None and self.std_after is not None:
                text += f", std {self.std_before:.4g} → {self.std_after:.4g}"
        if self.nulls_before != self.nulls_after:
            text += f"; nulls {self.nulls_before:,} → {self.nulls_after:,}"
        if self.top_changes:
            text += "; " + ", ".join(self.top_changes)
        return text


def _numeric(values: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)


def column_diff(column: str, before: pd.Series, after: pd.Series) -> ColumnDiff:
    b_null, a_null = before.isna().to_numpy(), after.isna().to_numpy()
    both = ~b_null & ~a_null
    differs = b_null != a_null
    numeric = _numeric(before) and _numeric(after)
    if numeric:
        x, y = before.to_numpy(dtype=np.float64), after.to_numpy(dtype=np.float64)
        differs |= both & ~np.isclose(x, y, rtol=1e-12, atol=0.0)
    else:
        differs |= both & (before.astype(str).to_numpy() != after.astype(str).to_numpy())
    diff = ColumnDiff(
        column=column, rows=len(before), changed=int(differs.sum()), nulls_before=int(b_null.sum()),
        nulls_after=int(a_null.sum()),
    )  # fmt: skip
    if numeric:
        stats = {"mean_before": before.mean(), "mean_after": after.mean()}
        stats |= {"std_before": before.std(), "std_after": after.std()}
        return diff.model_copy(update={k: None if pd.isna(v) else float(v) for k, v in stats.items()})
    pairs = pd.DataFrame({"b": before[differs].astype(str), "a": after[differs].astype(str)}).value_counts().head(_TOP)
    changes = [f"{pair[0]} → {pair[1]}: {int(n):,} rows" for pair, n in pairs.items() if isinstance(pair, tuple)]
    return diff.model_copy(update={"top_changes": changes})
