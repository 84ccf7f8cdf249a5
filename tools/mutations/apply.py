"""Applying an allowlisted mutation to an evaluation column: type checks against the column, row selection from
``default_rng(seed)`` alone (a run is reproducible from the plan), and a mutated copy that keeps the column's dtype
where the values still fit it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tools.mutations.operators import (
    CONSTANT_TYPES,
    REGISTRY,
    Constant,
    Kind,
    Mutation,
    MutationTypeError,
    NullInject,
    Operator,
    Shuffle,
)
from tools.mutations.parse import ALLOWED_OPERATORS


def column_kind(series: pd.Series) -> Kind:
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_numeric_dtype(dtype):
        return "numeric"
    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(dtype) or dtype == np.dtype(object):
        return "categorical"
    return "other"


def check_compatible(mutation: Mutation, series: pd.Series) -> None:
    """Raise MutationTypeError (or PlanError for value-level problems) if the mutation cannot run on series."""
    kind = column_kind(series)
    if not mutation.fits(kind):
        fitting = [ALLOWED_OPERATORS[op].split(":")[0] for op, cls in REGISTRY.items() if kind in cls.kinds]
        hint = f"; constant needs a value of type {' or '.join(t.__name__ for t in CONSTANT_TYPES[kind])}" if (
            isinstance(mutation, Constant) and kind in CONSTANT_TYPES) else ""  # fmt: skip
        raise MutationTypeError(
            f"{mutation.op} cannot be applied to column {series.name!r} ({kind}, dtype {series.dtype}); "
            f"operators that fit a {kind} column: {', '.join(fitting)}{hint}{_stray_text(series)}"
        )
    mutation.check_values(series)


def _stray_text(series: pd.Series) -> str:
    """For a column of numbers but for a few cells ("12.5 USD"): where the first such cell is, to fix the data."""
    if column_kind(series) != "categorical":
        return ""
    present = series.notna()
    numbers = pd.to_numeric(series, errors="coerce")
    positions = np.flatnonzero((present & numbers.isna()).to_numpy())
    if len(positions) == 0 or len(positions) > 0.5 * int(present.sum()):
        return ""
    return (
        f". The column holds numbers but for {len(positions)} cell(s), the first in row {int(positions[0]) + 1} of "
        "the rows read: the evaluation data is not clean (fix the file, then assess again)"
    )


def _select_rows(n: int, fraction: float, rng: np.random.Generator) -> np.ndarray | slice:
    k = min(n, max(1, round(fraction * n)))
    # All rows: a slice avoids building and gathering through a million-entry index array.
    return slice(None) if k == n else rng.choice(n, size=k, replace=False)


def _row_mask(n: int, rows: np.ndarray | slice) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[rows] = True
    return mask


def apply_mutation(column: pd.Series, mutation: Mutation) -> pd.Series:
    """Return a new, mutated series; the input is never modified. Non-selected rows are unchanged."""
    check_compatible(mutation, column)
    n = len(column)
    rng = np.random.default_rng(mutation.seed)
    rows = _select_rows(n, mutation.fraction, rng)
    kind = column_kind(column)
    if isinstance(mutation, NullInject) and kind != "numeric":  # numeric columns go through the float path
        return column.mask(_row_mask(n, rows))
    if isinstance(mutation, Shuffle):
        positions = np.arange(n)
        positions[rows] = rng.permutation(positions[rows])
        return column.take(positions).set_axis(column.index)
    if kind == "boolean" and isinstance(mutation, Constant):  # the only other operator that fits booleans
        return column.mask(_row_mask(n, rows), mutation.value)
    if kind == "categorical":
        return _apply_categorical(column, mutation, rows)
    return _apply_numeric(column, mutation, rows, rng)


def _apply_numeric(
    column: pd.Series, mutation: Operator, rows: np.ndarray | slice, rng: np.random.Generator
) -> pd.Series:
    out = column.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    out[rows] = mutation.transform_numeric(out[rows], rng)
    dtype = column.dtype
    is_ext = isinstance(dtype, pd.api.extensions.ExtensionDtype)
    keep_int = pd.api.types.is_integer_dtype(dtype) and mutation.keeps_integers() and _fits_integer(out, dtype)
    result: object = out
    if keep_int or pd.api.types.is_float_dtype(dtype):
        # pandas-stubs: pd.array's dtype overloads and ndarray.astype do not accept this dtype | ExtensionDtype union
        result = pd.array(out, dtype=dtype) if is_ext else out.astype(dtype, copy=False)  # type: ignore[arg-type]
    elif is_ext:  # nullable integer column that became float: stay nullable
        result = pd.array(out, dtype="Float64")
    return pd.Series(result, index=column.index, name=column.name, copy=False)


def _fits_integer(values: np.ndarray, dtype: Any) -> bool:
    """Keep an integer dtype only if every value fits; otherwise fall back to float rather than wrap around."""
    missing = np.isnan(values)
    if missing.any() and not isinstance(dtype, pd.api.extensions.ExtensionDtype):
        return False  # numpy integers cannot hold a missing value
    info = np.iinfo(np.dtype(getattr(dtype, "numpy_dtype", dtype)))
    finite = values[~missing]
    return finite.size == 0 or bool(finite.min() >= info.min and finite.max() < float(info.max) + 1)


def _apply_categorical(column: pd.Series, mutation: Operator, rows: np.ndarray | slice) -> pd.Series:
    values = column.to_numpy(dtype=object, copy=True)
    values[rows] = mutation.transform_categorical(values[rows])
    dtype = column.dtype
    result: object = values
    if isinstance(dtype, pd.CategoricalDtype):
        added = pd.Index(pd.unique(values[rows])).dropna().difference(dtype.categories, sort=False)
        result = pd.Categorical(values, categories=dtype.categories.append(added), ordered=dtype.ordered)
    elif dtype != np.dtype(object):
        # pandas-stubs: pd.array's dtype overloads do not accept a dtype | ExtensionDtype union
        result = pd.array(values, dtype=dtype)  # type: ignore[arg-type]
    return pd.Series(result, index=column.index, name=column.name, copy=False)
