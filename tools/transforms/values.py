"""The values the evaluator works with: a scalar, NULL (None), `Depends` (other columns decide it) or `NotTrue` (a
condition that is FALSE or NULL), SQL's three-valued truth tables, and `NotEvaluable`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sqlglot import exp

from tools.errors import BadRequest
from tools.transforms.nodes import Scalar


class NotEvaluable(BadRequest, ValueError):
    """The reader cannot tell exactly what the engine computes here; the message says where."""


@dataclass(frozen=True)
class Depends:
    reason: str


@dataclass(frozen=True)
class NotTrue:
    """A condition known to be FALSE or NULL (which one, other columns decide): a CASE skips it."""


Value = Scalar | None | Depends | NotTrue
T, F, N = "T", "F", "N"
TRUTH: dict[object, frozenset[str]] = {True: frozenset(T), False: frozenset(F), None: frozenset(N)}
FROM_TRUTH: dict[frozenset[str], Value] = {frozenset(T): True, frozenset(F): False, frozenset(N): None,
                                            frozenset(F + N): NotTrue()}  # fmt: skip
AND = {(a, b): F if F in (a, b) else (N if N in (a, b) else T) for a in T + F + N for b in T + F + N}
OR = {(a, b): T if T in (a, b) else (N if N in (a, b) else F) for a in T + F + N for b in T + F + N}
NOT = {T: F, F: T, N: N}


def is_number(value: Value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class Reads(Protocol):
    """The evaluator as the condition handlers use it."""

    def value(self, node: exp.Expr | None) -> Value: ...

    def strict(self, nodes: list[exp.Expr | None]) -> list[Scalar] | Value: ...

    def truth(self, node: exp.Expr) -> frozenset[str]: ...
