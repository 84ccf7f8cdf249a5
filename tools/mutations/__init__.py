"""The mutation operator allowlist (docs/design.md §5): typed, bounded, deterministic column mutations.

A plan (from the LLM or the deterministic planner) names an operator and its parameters. ``parse_mutation``
validates them against the allowlist (operators.py, parse.py), ``check_compatible`` against the evaluation
column, and ``apply_mutation`` returns a mutated copy (apply.py). The package imports nothing else of ours, so the
evidence schema can type a plan's mutation with the same union the experiment runs. apply.py (pandas) is loaded on
first use: reading evidence or validating a plan does not need it, and `provenance runs` should not wait for pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tools.mutations.operators import Kind, Mutation, MutationTypeError, PlanError
from tools.mutations.parse import ALLOWED_OPERATORS, parse_mutation

if TYPE_CHECKING:
    from tools.mutations.apply import apply_mutation, check_compatible, column_kind

_APPLY = frozenset({"apply_mutation", "check_compatible", "column_kind"})


def __getattr__(name: str) -> Any:
    if name in _APPLY:
        from tools.mutations import apply

        return getattr(apply, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ALLOWED_OPERATORS",
    "Kind",
    "Mutation",
    "MutationTypeError",
    "PlanError",
    "apply_mutation",
    "check_compatible",
    "column_kind",
    "parse_mutation",
]
