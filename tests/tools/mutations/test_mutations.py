"""The mutation allowlist: parsing and bounds, type checks, determinism and the dtype rules."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from tools.mutations import (
    ALLOWED_OPERATORS,
    Mutation,
    MutationTypeError,
    PlanError,
    apply_mutation,
    check_compatible,
    parse_mutation,
)

ALL_OPS = [
    "scale", "shift", "null_inject", "constant", "category_remap", "unseen_category",
    "round", "clip", "noise", "sign_flip", "shuffle", "cyclic_shift",
]  # fmt: skip


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "amount": [12.5, 3.0, -7.25, 100.0, 0.5, 42.0],
            "count": np.array([1, 2, 3, 4, 5, 6], dtype=np.int64),
            "hour": np.array([0, 5, 21, 22, 23, 12], dtype=np.int64),
            "country": ["US", "DE", "US", "FR", "DE", "US"],
            "segment": ["a", "b", "a", "c", "b", "a"],
            "flag": [True, False, True, False, True, False],
            "ts": pd.date_range("2024-01-01", periods=6, freq="h"),
        },
        index=[10, 11, 12, 13, 14, 15],
    ).astype({"country": "str", "segment": "category"})


# op, params, column, expected values after mutating every row (computed independently of the module)
FULL_ROW_CASES = [
    ("scale", {"factor": 100}, "amount", lambda s: s * 100),
    ("shift", {"offset": -2.5}, "amount", lambda s: s - 2.5),
    ("round", {"decimals": 0}, "amount", lambda s: pd.Series(np.round(s.to_numpy()), index=s.index)),
    ("round", {"decimals": -1}, "count", lambda s: pd.Series([0, 0, 0, 0, 0, 10], index=s.index)),
    ("clip", {"lower": 0, "upper": 50}, "amount", lambda s: s.where(s > 0, 0).where(s < 50, 50)),
    ("clip", {"upper": 3}, "count", lambda s: s.where(s < 3, 3)),
    ("sign_flip", {}, "amount", lambda s: -s),
    ("cyclic_shift", {"offset": 3, "period": 24}, "hour", lambda s: pd.Series([3, 8, 0, 1, 2, 15], index=s.index)),
    ("cyclic_shift", {"offset": -1, "period": 24}, "hour", lambda s: pd.Series([23, 4, 20, 21, 22, 11], index=s.index)),
    ("constant", {"value": 7}, "count", lambda s: s * 0 + 7),
    ("constant", {"value": "XX"}, "country", lambda s: pd.Series(["XX"] * 6, index=s.index)),
    ("constant", {"value": False}, "flag", lambda s: s & False),
    ("category_remap", {"mapping": {"US": "USA"}}, "country", lambda s: s.replace({"US": "USA"})),
    ("unseen_category", {"value": "zz"}, "segment", lambda s: pd.Series(["zz"] * 6, index=s.index)),
]


@pytest.mark.parametrize(("op", "params", "column", "expected"), FULL_ROW_CASES)
def test_operator_on_every_row(
    frame: pd.DataFrame, op: str, params: dict[str, object], column: str, expected: Callable[[pd.Series], pd.Series]
) -> None:
    result = apply_mutation(frame[column], parse_mutation(op, params))
    assert list(result.index) == list(frame.index) and result.name == column
    want = expected(frame[column])
    assert [str(v) for v in result.tolist()] == [str(v) for v in want.tolist()]


def test_null_inject_and_shuffle_work_on_every_kind(frame: pd.DataFrame) -> None:
    for column in frame.columns:
        nulled = apply_mutation(frame[column], parse_mutation("null_inject", {}, fraction=0.5, seed=1))
        assert nulled.isna().sum() == 3
        shuffled = apply_mutation(frame[column], parse_mutation("shuffle", {}, seed=4))
        assert sorted(map(str, shuffled)) == sorted(map(str, frame[column]))
        assert shuffled.dtype == frame[column].dtype


def test_noise_is_relative_and_seeded(frame: pd.DataFrame) -> None:
    m = parse_mutation("noise", {"relative_std": 0.1}, seed=3)
    a, b = apply_mutation(frame["amount"], m), apply_mutation(frame["amount"], m)
    pd.testing.assert_series_equal(a, b)
    ratio = a / frame["amount"]
    assert (ratio != 1).all() and (ratio - 1).abs().max() < 1.0  # 10 sigma away is practically impossible


def test_category_remap_on_categorical_adds_the_new_category(frame: pd.DataFrame) -> None:
    result = apply_mutation(frame["segment"], parse_mutation("category_remap", {"mapping": {"a": "A", "q": "Q"}}))
    assert isinstance(result.dtype, pd.CategoricalDtype)
    assert result.tolist() == ["A", "b", "A", "c", "b", "A"]
    assert "A" in result.cat.categories


@pytest.mark.parametrize("op", ALL_OPS)
def test_input_is_never_modified(frame: pd.DataFrame, op: str) -> None:
    params_by_op: dict[str, dict[str, object]] = {
        "scale": {"factor": 3}, "shift": {"offset": 1}, "constant": {"value": "X"},
        "category_remap": {"mapping": {"US": "X"}}, "unseen_category": {"value": "X"}, "round": {"decimals": 0},
        "clip": {"lower": 0.0}, "noise": {"relative_std": 0.5}, "cyclic_shift": {"offset": 1, "period": 7},
    }  # fmt: skip
    params = params_by_op.get(op, {})
    column = "country" if op in {"constant", "category_remap", "unseen_category"} else "amount"
    original = frame[column]
    snapshot = original.copy(deep=True)
    result = apply_mutation(original, parse_mutation(op, params, fraction=1.0, seed=2))
    pd.testing.assert_series_equal(original, snapshot)
    assert result is not original
    assert not np.shares_memory(result.to_numpy(), original.to_numpy())


@pytest.mark.parametrize("n", [1, 7, 100, 1001])
@pytest.mark.parametrize("fraction", [1e-6, 0.01, 0.25, 0.5, 0.999, 1.0])
def test_exact_number_of_rows_selected(n: int, fraction: float) -> None:
    column = pd.Series(np.arange(1, n + 1, dtype=np.float64))  # no zeros, so scaling changes every selected row
    result = apply_mutation(column, parse_mutation("scale", {"factor": 2}, fraction=fraction, seed=9))
    assert int((result != column).sum()) == max(1, round(fraction * n))


def test_same_seed_same_rows_different_seed_different_rows() -> None:
    column = pd.Series(np.arange(1, 1001, dtype=np.float64))

    def changed(seed: int) -> set[int]:
        out = apply_mutation(column, parse_mutation("scale", {"factor": 2}, fraction=0.1, seed=seed))
        return set(np.flatnonzero(out.to_numpy() != column.to_numpy()))

    assert changed(5) == changed(5)
    assert changed(5) != changed(6)


def test_describe() -> None:
    m = parse_mutation("scale", {"factor": 100})
    assert m.describe("txn_amount") == "scale txn_amount by 100 on 100% of rows (seed 0)"
    assert (
        parse_mutation("null_inject", {}, fraction=0.05, seed=7).describe("x") == "set x to null on 5% of rows (seed 7)"
    )
    for op in ALL_OPS:
        assert op in ALLOWED_OPERATORS


BAD_PARAMS = [
    ("scale", {"factor": 0}, "factor"),
    ("scale", {"factor": 1e-7}, "factor"),
    ("scale", {"factor": -2e6}, "factor"),
    ("scale", {"factor": math.nan}, "factor"),
    ("scale", {"factor": math.inf}, "factor"),
    ("scale", {}, "factor"),
    ("scale", {"factor": 2, "foo": 1}, "foo"),
    ("shift", {"offset": 2e12}, "offset"),
    ("shift", {"offset": -math.inf}, "offset"),
    ("round", {"decimals": 11}, "decimals"),
    ("round", {"decimals": -7}, "decimals"),
    ("round", {"decimals": 1.5}, "decimals"),
    ("clip", {}, "lower"),
    ("clip", {"lower": 5, "upper": 5}, "upper"),
    ("clip", {"lower": math.nan}, "lower"),
    ("noise", {"relative_std": 0}, "relative_std"),
    ("noise", {"relative_std": 10.5}, "relative_std"),
    ("cyclic_shift", {"offset": 1, "period": 0}, "period"),
    ("cyclic_shift", {"offset": 24, "period": 24}, "offset"),
    ("category_remap", {"mapping": {}}, "mapping"),
    ("category_remap", {"mapping": {str(i): "x" for i in range(1001)}}, "mapping"),
    ("category_remap", {"mapping": {"a": 1}}, "mapping"),
    ("unseen_category", {"value": ""}, "value"),
    ("constant", {"value": None}, "value"),
    ("constant", {"value": [1]}, "value"),
    ("constant", {"value": math.nan}, "value"),
]


@pytest.mark.parametrize(("op", "params", "name"), BAD_PARAMS)
def test_bad_parameters_are_rejected_naming_the_parameter(op: str, params: dict, name: str) -> None:
    with pytest.raises(PlanError) as info:
        parse_mutation(op, params)
    message = str(info.value)
    assert name in message and ALLOWED_OPERATORS[op] in message
    assert "errors.pydantic.dev" not in message and "validation error" not in message


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.0000001, 2.0])
def test_fraction_out_of_range(fraction: float) -> None:
    with pytest.raises(PlanError, match=r"fraction must be in \(0, 1\]"):
        parse_mutation("sign_flip", {}, fraction=fraction)


def test_negative_seed_and_reserved_params_rejected() -> None:
    with pytest.raises(PlanError, match="seed"):
        parse_mutation("sign_flip", {}, seed=-1)
    with pytest.raises(PlanError, match="fraction"):
        parse_mutation("sign_flip", {"fraction": 0.5})


def test_unknown_operator_lists_every_operator_with_parameters() -> None:
    with pytest.raises(PlanError) as info:
        parse_mutation("multiply", {"factor": 2})
    message = str(info.value)
    assert "'multiply'" in message
    for op, text in ALLOWED_OPERATORS.items():
        assert op in message and text in message
    assert len(ALLOWED_OPERATORS) == 12


def test_operator_names_are_case_insensitive() -> None:
    assert parse_mutation(" Scale ", {"factor": 2}).op == "scale"


@pytest.mark.parametrize(
    ("op", "params", "column", "fits"),
    [
        ("category_remap", {"mapping": {"1": "2"}}, "amount", "scale"),
        ("unseen_category", {"value": "x"}, "count", "scale"),
        ("scale", {"factor": 2}, "country", "category_remap"),
        ("cyclic_shift", {"offset": 1, "period": 24}, "segment", "unseen_category"),
        ("sign_flip", {}, "flag", "null_inject"),
        ("noise", {"relative_std": 0.1}, "ts", "shuffle"),
        ("constant", {"value": "x"}, "amount", "int or float"),
        ("constant", {"value": 1}, "country", "str"),
        ("constant", {"value": True}, "count", "int or float"),
        ("constant", {"value": 1}, "flag", "bool"),
    ],
)
def test_type_mismatch_is_refused(frame: pd.DataFrame, op: str, params: dict, column: str, fits: str) -> None:
    mutation = parse_mutation(op, params)
    with pytest.raises(MutationTypeError) as info:
        check_compatible(mutation, frame[column])
    assert column in str(info.value) and fits in str(info.value)
    with pytest.raises(MutationTypeError):
        apply_mutation(frame[column], mutation)


def test_value_level_checks(frame: pd.DataFrame) -> None:
    with pytest.raises(PlanError, match="none of the mapping keys"):
        check_compatible(parse_mutation("category_remap", {"mapping": {"XX": "YY"}}), frame["country"])
    with pytest.raises(PlanError, match="already occurs"):
        check_compatible(parse_mutation("unseen_category", {"value": "US"}), frame["country"])


def test_integer_dtype_rules(frame: pd.DataFrame) -> None:
    count = frame["count"]
    assert apply_mutation(count, parse_mutation("scale", {"factor": 100})).dtype == np.int64
    assert apply_mutation(count, parse_mutation("scale", {"factor": 1.5})).tolist() == [1.5, 3, 4.5, 6, 7.5, 9]
    assert apply_mutation(count, parse_mutation("null_inject", {})).dtype == np.float64
    nullable = pd.Series([1, None, 3], dtype="Int64")
    assert apply_mutation(nullable, parse_mutation("shift", {"offset": 1})).dtype == "Int64"
    assert apply_mutation(nullable, parse_mutation("shift", {"offset": 0.5})).dtype == "Float64"
    small = pd.Series([100, 120], dtype=np.int8)
    assert apply_mutation(small, parse_mutation("scale", {"factor": 2})).tolist() == [200.0, 240.0]  # no wrap-around


def test_mutation_is_a_discriminated_union() -> None:
    adapter = TypeAdapter(Mutation)
    m = adapter.validate_python({"op": "cyclic_shift", "offset": 3, "period": 24, "seed": 1})
    assert m == parse_mutation("cyclic_shift", {"offset": 3, "period": 24}, seed=1)
    assert adapter.validate_json(adapter.dump_json(m)) == m


def test_empty_column() -> None:
    empty = pd.Series([], dtype=np.float64)
    assert apply_mutation(empty, parse_mutation("scale", {"factor": 2})).empty


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=0, max_value=300),
    fraction=st.floats(min_value=1e-6, max_value=1),
    seed=st.integers(min_value=0, max_value=2**63 - 1),  # the operator's bound: a 64-bit integer in checkpoints
)
def test_property_numeric_rows_and_dtype(n: int, fraction: float, seed: int) -> None:
    column = pd.Series(np.arange(1, n + 1, dtype=np.int64), index=np.arange(n) * 3, name="c")
    k = min(n, max(1, round(fraction * n))) if n else 0
    scaled = apply_mutation(column, parse_mutation("scale", {"factor": 3}, fraction=fraction, seed=seed))
    assert len(scaled) == n and scaled.index.equals(column.index) and scaled.dtype == np.int64
    changed = scaled != column
    assert int(changed.sum()) == k
    assert (scaled[changed] == column[changed] * 3).all()
    nulled = apply_mutation(column, parse_mutation("null_inject", {}, fraction=fraction, seed=seed))
    assert nulled.dtype == np.float64 and int(nulled.isna().sum()) == k
    halved = apply_mutation(column, parse_mutation("scale", {"factor": 0.5}, fraction=fraction, seed=seed))
    assert halved.dtype == np.float64 and int((halved != column).sum()) == k
    assert set(np.flatnonzero(halved != column)) == set(np.flatnonzero(changed))  # rows depend on seed only


@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=80),
    fraction=st.floats(min_value=1e-6, max_value=1),
    seed=st.integers(min_value=0, max_value=10_000),
    categorical=st.booleans(),
)
def test_property_categorical_keeps_dtype(values: list[str], fraction: float, seed: int, categorical: bool) -> None:
    column = pd.Series(values, dtype="category" if categorical else "str")
    shuffled = apply_mutation(column, parse_mutation("shuffle", {}, fraction=fraction, seed=seed))
    assert shuffled.dtype == column.dtype and sorted(shuffled) == sorted(column)
    unseen = apply_mutation(column, parse_mutation("unseen_category", {"value": "zz"}, fraction=fraction, seed=seed))
    k = min(len(values), max(1, round(fraction * len(values)))) if values else 0
    assert len(unseen) == len(column) and int((unseen == "zz").sum()) == k
    assert isinstance(unseen.dtype, pd.CategoricalDtype) == categorical


def test_scale_one_million_rows_is_fast() -> None:
    column = pd.Series(np.random.default_rng(0).random(1_000_000), name="txn_amount")
    mutation = parse_mutation("scale", {"factor": 100})
    timings = []
    for _ in range(5):
        start = time.perf_counter()
        apply_mutation(column, mutation)
        timings.append(time.perf_counter() - start)
    assert min(timings) < 0.1, f"best of 5: {min(timings) * 1000:.1f} ms"


@pytest.mark.parametrize("fraction", [1e-300, 9.9e-7])
def test_a_share_too_small_to_change_a_row_is_refused_saying_the_floor(fraction: float) -> None:
    """`fraction: 1e-300` gave PASS — on the one row every experiment changes at the least."""
    with pytest.raises(PlanError, match=r"fraction must be at least 1e-06 \(one row in a million\)"):
        parse_mutation("scale", {"factor": 100}, fraction=fraction, seed=0)
