"""The operators of the allowlist: one frozen pydantic model each (bounds checked on construction), the
`REGISTRY` of them by name, the discriminated `Mutation` union, and the errors a plan can raise. Turning a plan's
(op, params) into one of them is parse.py."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tools.errors import BadRequest

if TYPE_CHECKING:  # pandas is imported where a value is checked: evidence files load without it (`provenance runs`)
    import pandas as pd

Kind = Literal["numeric", "boolean", "categorical", "other"]
_ALL_KINDS: frozenset[str] = frozenset({"numeric", "boolean", "categorical", "other"})
CONSTANT_TYPES = {"numeric": (int, float), "boolean": (bool,), "categorical": (str,)}


MIN_FRACTION = 1e-6
"""The smallest share of rows a mutation may take: a smaller one selects no row, and tests nothing."""


class PlanError(BadRequest, ValueError):
    """A mutation that cannot run as written; the message says what is allowed. `suggestions`: requests that can
    run instead, in words the offline planner reads back to exactly the plan they name (agent/planning/suggest.py)."""

    def __init__(self, message: str = "", suggestions: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.suggestions = list(suggestions)


class MutationTypeError(PlanError):
    """The operator does not fit the column's type."""


class Operator(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    fraction: float = 1.0
    seed: int = Field(0, ge=0, le=2**63 - 1)  # checkpoints store it as a 64-bit integer

    summary: ClassVar[str]
    action: ClassVar[str]  # describe() template, formatted with the column name and the parameters
    kinds: ClassVar[frozenset[str]] = frozenset({"numeric"})
    int_params: ClassVar[tuple[str, ...] | None] = None  # integral values here keep an int column's dtype

    @field_validator("fraction")
    @classmethod
    def _fraction_in_range(cls, value: float) -> float:
        if not 0 < value <= 1:
            raise ValueError("fraction must be in (0, 1]")
        if value < MIN_FRACTION:  # 1e-300 "passed" by changing the one row every experiment changes at least
            raise ValueError(
                f"fraction must be at least {MIN_FRACTION:g} (one row in a million): a smaller share changes no row "
                "of a real table, so a verdict on it would answer nothing; give the share you expect"
            )
        return value

    @classmethod
    def signature(cls) -> str:
        params = [name for name in cls.model_fields if name not in {"op", "fraction", "seed"}]
        return f"{cls.model_fields['op'].default}({', '.join(params)})"

    def describe(self, column_name: str) -> str:
        return f"{self._action(column_name)} on {self.fraction * 100:g}% of rows (seed {self.seed})"

    def fits(self, kind: Kind) -> bool:
        return kind in self.kinds

    def keeps_integers(self) -> bool:
        """True when integers map to integers, so an integer column may keep its dtype."""
        if self.int_params is None:
            return False
        return all(float(getattr(self, p) or 0).is_integer() for p in self.int_params)

    def _action(self, column: str) -> str:
        return self.action.format(column=column, **dict(self))

    def transform_numeric(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def transform_categorical(self, values: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def check_values(self, series: pd.Series) -> None:
        """Value-level checks beyond the type; default: none."""


class Scale(Operator):
    op: Literal["scale"] = "scale"
    factor: float
    summary = "multiply by factor; factor != 0, 1e-6 <= |factor| <= 1e6 (dollars->cents: 100)"
    action, int_params = "scale {column} by {factor:g}", ("factor",)

    @field_validator("factor")
    @classmethod
    def _bounded(cls, value: float) -> float:
        if not 1e-6 <= abs(value) <= 1e6:
            raise ValueError("factor must be non-zero with 1e-6 <= |factor| <= 1e6")
        return value

    def transform_numeric(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return x * self.factor


class Shift(Operator):
    op: Literal["shift"] = "shift"
    offset: float = Field(ge=-1e12, le=1e12)
    summary = "add offset; |offset| <= 1e12"
    action, int_params = "shift {column} by {offset:+g}", ("offset",)

    def transform_numeric(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return x + self.offset


class NullInject(Operator):
    op: Literal["null_inject"] = "null_inject"
    summary = "set the rows to null (any column; integer columns become float)"
    action, kinds = "set {column} to null", _ALL_KINDS

    def transform_numeric(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.full(len(x), np.nan)


class Constant(Operator):
    op: Literal["constant"] = "constant"
    value: bool | int | float | str
    summary = "set the rows to value: int/float for numeric, bool for boolean, str for string columns"
    action, int_params = "set {column} to constant {value!r}", ("value",)
    kinds = frozenset({"numeric", "boolean", "categorical"})

    @field_validator("value", mode="before")
    @classmethod
    def _json_scalar(cls, value: object) -> object:
        # Checked before pydantic's coercion so "3" stays a string and True stays a bool.
        if value is None:
            raise ValueError("value must not be null; use null_inject to inject nulls")
        if not isinstance(value, bool | int | float | str):
            raise ValueError("value must be a str, int, float or bool")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("value must be a finite number")
        return value

    def fits(self, kind: Kind) -> bool:
        allowed = CONSTANT_TYPES.get(kind, ())
        return isinstance(self.value, allowed) and (kind == "boolean") == isinstance(self.value, bool)

    def keeps_integers(self) -> bool:
        return isinstance(self.value, int)

    def transform_numeric(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.full(len(x), float(self.value))

    def transform_categorical(self, values: np.ndarray) -> np.ndarray:
        return np.full(len(values), self.value, dtype=object)


class CategoryRemap(Operator):
    op: Literal["category_remap"] = "category_remap"
    mapping: dict[str, str] = Field(min_length=1, max_length=1000)
    summary = "rename categories {old: new}; 1 to 1000 str->str entries (string/category columns)"
    action, kinds = "", frozenset({"categorical"})

    def _action(self, column: str) -> str:
        pairs = [f"{k!r}->{v!r}" for k, v in list(self.mapping.items())[:3]]
        more = f", +{len(self.mapping) - 3} more" if len(self.mapping) > 3 else ""
        return f"remap categories of {column} ({', '.join(pairs)}{more})"

    def check_values(self, series: pd.Series) -> None:
        # A mapping that matches nothing would measure nothing and report a misleading PASS.
        if not series.isin(list(self.mapping)).any():
            raise PlanError(
                f"category_remap: none of the mapping keys {sorted(self.mapping)[:10]} occur in column "
                f"{series.name!r}; some values it holds: {list(series.dropna().unique())[:10]}"
            )

    def transform_categorical(self, values: np.ndarray) -> np.ndarray:
        import pandas as pd

        positions = pd.Index(list(self.mapping)).get_indexer(pd.Index(values))
        hit = positions >= 0
        out = values.copy()
        out[hit] = np.asarray(list(self.mapping.values()), dtype=object)[positions[hit]]
        return out


class UnseenCategory(Operator):
    op: Literal["unseen_category"] = "unseen_category"
    value: str = Field(min_length=1)
    summary = "replace with a category absent from the column; non-empty str (string/category columns)"
    action, kinds = "replace {column} with unseen category {value!r}", frozenset({"categorical"})

    def check_values(self, series: pd.Series) -> None:
        if series.eq(self.value).any():
            raise PlanError(f"unseen_category: {self.value!r} already occurs in column {series.name!r}")

    def transform_categorical(self, values: np.ndarray) -> np.ndarray:
        return np.full(len(values), self.value, dtype=object)


class Round(Operator):
    op: Literal["round"] = "round"
    decimals: int = Field(ge=-6, le=10)
    summary = "round to decimals places, int in [-6, 10] (numpy rounds half to even)"
    action, int_params = "round {column} to {decimals} decimals", ()

    def transform_numeric(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.round(x, self.decimals)


class Clip(Operator):
    op: Literal["clip"] = "clip"
    lower: float | None = None
    upper: float | None = None
    summary = "clip to [lower, upper]; at least one bound given, lower < upper"
    action, int_params = "clip {column} to [{lower}, {upper}]", ("lower", "upper")

    @model_validator(mode="after")
    def _ordered(self) -> Clip:
        if self.lower is None and self.upper is None:
            raise ValueError("clip needs at least one of lower, upper")
        if self.lower is not None and self.upper is not None and not self.lower < self.upper:
            raise ValueError(f"lower must be less than upper (got lower={self.lower}, upper={self.upper})")
        return self

    def transform_numeric(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(np.clip(x, self.lower, self.upper))  # numpy types clip with a None bound as Any


class Noise(Operator):
    op: Literal["noise"] = "noise"
    relative_std: float = Field(gt=0, le=10)
    summary = "multiply by (1 + e), e ~ Normal(0, relative_std); 0 < relative_std <= 10"
    action = "add Gaussian noise to {column} (relative std {relative_std:g})"

    def transform_numeric(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Relative to each value so the noise keeps the column's units and scale (a 1% error stays 1%).
        return x * (1.0 + rng.normal(0.0, self.relative_std, size=len(x)))


class SignFlip(Operator):
    op: Literal["sign_flip"] = "sign_flip"
    summary = "negate the values"
    action, int_params = "flip the sign of {column}", ()

    def transform_numeric(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return -x


class Shuffle(Operator):
    op: Literal["shuffle"] = "shuffle"
    summary = "permute the values among the selected rows (any column)"
    action, kinds = "shuffle {column} across rows", _ALL_KINDS


class CyclicShift(Operator):
    op: Literal["cyclic_shift"] = "cyclic_shift"
    offset: float
    period: float = Field(gt=0)
    summary = "(x + offset) mod period, e.g. a time-zone shift of hour: offset 3, period 24; |offset| < period"
    action = "cyclically shift {column} by {offset:+g} modulo {period:g}"
    int_params = ("offset", "period")

    @model_validator(mode="after")
    def _offset_within_period(self) -> CyclicShift:
        if not abs(self.offset) < self.period:
            raise ValueError(f"offset must satisfy |offset| < period (got offset={self.offset}, period={self.period})")
        return self

    def transform_numeric(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.mod(x + self.offset, self.period)


_OPERATORS: tuple[type[Operator], ...] = (Scale, Shift, NullInject, Constant, CategoryRemap, UnseenCategory,
                                     Round, Clip, Noise, SignFlip, Shuffle, CyclicShift)  # fmt: skip
REGISTRY: dict[str, type[Operator]] = {cls.model_fields["op"].default: cls for cls in _OPERATORS}

# fmt: off
Mutation = Annotated[
    Scale | Shift | NullInject | Constant | CategoryRemap | UnseenCategory | Round | Clip | Noise | SignFlip
    | Shuffle | CyclicShift,
    Field(discriminator="op"),
]
# fmt: on
