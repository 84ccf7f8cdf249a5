"""Every derivable row of the table (cases.py) is exact: on random data, the derived mutation applied to f(x) equals
f(mutated x), both computed by DuckDB, with x mutated by apply_mutation on the same fraction and seed."""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.tools.transforms.cases import CASES, Case, Refused
from tools.mutations import apply_mutation
from tools.transforms import column_expressions, derive

DERIVABLE = [case for case in CASES if not isinstance(case.expected, Refused)]
TEXT = ["a", "b", "c", "d", "e", "A", "B", " a"]
LOWER_TEXT = ["a", "b", "c", "d", "e"]
_NUMBERS = {
    # no magnitudes near the smallest normal double: 1/x overflows to inf there, in the engine and in the derivation
    # alike but not in the same place (a float overflow, not a derivation error)
    "real": st.one_of(
        st.sampled_from([0.0, -1.0, 1.0, 2.5, -3.0]),
        st.floats(-1e3, 1e3, allow_nan=False, allow_subnormal=False).filter(lambda v: v == 0.0 or abs(v) >= 1e-6),
    ),
    "positive": st.floats(1e-3, 1e3),
    "small": st.floats(-20, 20),
}


@st.composite
def frames(draw: st.DrawFn, case: Case) -> pd.DataFrame:
    n = draw(st.integers(1, 12))
    numbers = _NUMBERS.get(case.domain, _NUMBERS["real"])
    maybe = lambda values: st.one_of(st.none(), values)  # noqa: E731
    x = draw(st.lists(maybe(numbers), min_size=n, max_size=n))
    y = draw(st.lists(maybe(st.floats(-100, 100).filter(lambda v: abs(v) > 1e-3)), min_size=n, max_size=n))
    words = LOWER_TEXT if case.domain == "lower_text" else TEXT
    s = draw(st.lists(maybe(st.sampled_from(words)), min_size=n, max_size=n))
    keys = list(case.mutation.model_dump().get("mapping", {})) or ["a"]
    for key in keys:  # a remap must find one of its keys; NULLs must not make s an all-NULL (typeless) column
        s.append(key)
        x.append(draw(numbers))
        y.append(1.0)
    return pd.DataFrame(
        {
            "rid": range(len(x)),
            "x": pd.Series(x, dtype="float64"),
            "y": pd.Series(y, dtype="float64"),
            "s": pd.Series(s, dtype=object),
        }  # fmt: skip
    )


def run(connection: duckdb.DuckDBPyConnection, sql: str, *frames: pd.DataFrame) -> list[pd.Series]:
    """f over each frame, in one query."""
    both = pd.concat([frame.assign(k=i) for i, frame in enumerate(frames)], ignore_index=True)
    connection.register("t", both)
    try:
        out = connection.execute(f"SELECT k, {sql} AS out FROM t ORDER BY k, rid").df()
    finally:
        connection.unregister("t")
    return [out["out"][out["k"] == i].reset_index(drop=True) for i in range(len(frames))]


def same_values(actual: pd.Series, expected: pd.Series) -> bool:
    if len(actual) != len(expected):
        return False
    for a, e in zip(actual.tolist(), expected.tolist(), strict=True):
        if pd.isna(a) or pd.isna(e):
            if not (pd.isna(a) and pd.isna(e)):
                return False
        elif isinstance(e, float | int | np.number) and not isinstance(e, bool):
            if not math.isclose(float(a), float(e), rel_tol=1e-9, abs_tol=1e-9):
                return False
        elif a != e:
            return False
    return True


@pytest.fixture(scope="module")
def connection() -> duckdb.DuckDBPyConnection:
    return duckdb.connect(config={"threads": 1})


def trials(case: Case) -> st.SearchStrategy[list[tuple[pd.DataFrame, float, int]]]:
    """Up to 3 data sets, each with its own fraction and seed: DuckDB runs them all in one query."""
    return st.lists(st.tuples(frames(case), st.floats(0.05, 1.0), st.integers(0, 2**16)), min_size=1, max_size=3)


@pytest.mark.parametrize("case", DERIVABLE, ids=lambda case: case.id)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_derived_mutation_is_what_the_engine_computes(
    connection: duckdb.DuckDBPyConnection, case: Case, data: st.DataObject
) -> None:
    expression = column_expressions(f"SELECT {case.sql} AS out FROM t", dialect="duckdb").columns["out"]
    drawn = data.draw(trials(case))
    mutations = [case.mutation.model_copy(update={"fraction": fraction, "seed": seed}) for _, fraction, seed in drawn]
    frames_ = [frame for frame, _, _ in drawn]
    mutated = [
        f.assign(**{case.source: apply_mutation(f[case.source], m)}) for f, m in zip(frames_, mutations, strict=True)
    ]
    outputs = run(connection, case.sql, *frames_, *mutated)
    for i, (frame, mutation) in enumerate(zip(frames_, mutations, strict=True)):
        derivation = derive(mutation, expression, ("t", case.source))
        before, after = outputs[i], outputs[len(frames_) + i]
        predicted = before if derivation.unchanged else apply_mutation(before, derivation.mutation)  # type: ignore[arg-type]
        assert same_values(predicted, after), (
            f"{derivation.explanation}\nx: {frame[case.source].tolist()}\nmutated: {mutated[i][case.source].tolist()}"
            f"\nf(x): {before.tolist()}\nf(mutated): {after.tolist()}\nderived: {predicted.tolist()}"
        )


def test_the_property_can_fail() -> None:
    """A wrong derivation (×k where the output is ×1/k) is caught by the same comparison."""
    connection = duckdb.connect()
    frame = pd.DataFrame({"rid": [0, 1, 2], "x": [1.0, 2.0, 4.0], "y": [3.0, 3.0, 3.0], "s": ["a", "b", "c"]})
    case = next(c for c in DERIVABLE if c.sql == "y / x")
    mutated = frame.assign(x=apply_mutation(frame["x"], case.mutation))
    before, after = run(connection, "y / x", frame, mutated)
    assert not same_values(apply_mutation(before, case.mutation), after)
    assert same_values(apply_mutation(before, case.expected), after)  # type: ignore[arg-type]
