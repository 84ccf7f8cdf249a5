"""Turning a plan's (op, params) into an allowlisted operator, or a PlanError that says what is allowed: the
`ALLOWED_OPERATORS` text (one line per operator, also shown to the planner) and short per-parameter messages in
place of pydantic's validation dump."""

from __future__ import annotations

from collections.abc import Mapping
from typing import get_args

from pydantic import ValidationError

from tools.mutations.operators import MIN_FRACTION, REGISTRY, Mutation, PlanError

ALLOWED_OPERATORS: dict[str, str] = {op: f"{cls.signature()}: {cls.summary}" for op, cls in REGISTRY.items()}
_COMMON = f"every operator also takes fraction in [{MIN_FRACTION:g}, 1] (default 1.0) and seed >= 0 (default 0)"


def _allowed_text() -> str:
    return "\n".join(f"  - {text}" for text in ALLOWED_OPERATORS.values())


def parse_mutation(op: str, params: Mapping[str, object], *, fraction: float = 1.0, seed: int = 0) -> Mutation:
    """Validate an operator and its parameters against the allowlist; raise PlanError saying what is allowed."""
    cls = REGISTRY.get(op.strip().lower()) if isinstance(op, str) else None
    if cls is None:
        raise PlanError(f"unknown mutation operator {op!r}; allowed operators:\n{_allowed_text()}\n({_COMMON})")
    name = cls.model_fields["op"].default
    if not isinstance(params, Mapping):
        raise PlanError(f"{name}: params must be a mapping of parameter name to value, got {type(params).__name__}")
    reserved = sorted({"op", "fraction", "seed"} & set(params))
    if reserved:
        raise PlanError(f"{name}: pass {', '.join(reserved)} as arguments of their own, not inside params")
    for key, value in params.items():
        numeric = key in cls.model_fields and _numeric(cls.model_fields[key].annotation)
        if numeric and isinstance(value, bool):
            # pydantic would read True as 1: `factor: true` tested ×1, no change at all, and passed
            raise PlanError(f"invalid {name} mutation: parameter '{key}' must be a number, got {value!r}")
    for key, value in (("fraction", fraction), ("seed", seed)):
        if isinstance(value, bool):
            raise PlanError(f"invalid {name} mutation: {key} must be a number, got {value!r}")
    try:
        return cls.model_validate({**params, "fraction": fraction, "seed": seed})  # type: ignore[return-value]
    except ValidationError as exc:
        raise PlanError(
            f"invalid {name} mutation: {_readable(exc)}. Allowed: {ALLOWED_OPERATORS[name]}; {_COMMON}"
        ) from None


def _readable(exc: ValidationError) -> str:
    """One short line per parameter instead of pydantic's dump (union members would repeat each error)."""
    messages: dict[str, str] = {}
    for err in exc.errors():
        param = str(err["loc"][0]) if err["loc"] else ""
        if param in messages:
            continue
        text = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "missing":
            messages[param] = f"missing required parameter '{param}'"
        elif err["type"] == "extra_forbidden":
            messages[param] = f"unknown parameter '{param}'"
        elif param:
            messages[param] = f"parameter '{param}': {text} (got {err['input']!r})"
        else:
            messages[param] = text
    return "; ".join(messages.values())


def _numeric(annotation: object) -> bool:
    """An int or float parameter (optional or not)."""
    members = get_args(annotation) or (annotation,)
    return any(m in (int, float) for m in members) and all(m in (int, float, type(None)) for m in members)
