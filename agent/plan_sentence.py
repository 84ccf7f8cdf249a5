"""The planned experiment in one plain sentence, for the person who approves it: what is changed, on which column,
on what share of rows, why (the planner's rationale) and every default the request left open (its assumptions).

The chat shows it before the experiment runs; the approval request carries it (`ApprovalRequest.change_tested`),
so the chat's card and the CLI prompt repeat it next to the verdict and the writes. Only pydantic and
`agent.schemas` are imported: the CLI and the chat use it without loading the experiment's libraries."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from agent.schemas import ExperimentPlan

PLANNED = "Planned experiment"
_MAX_PAIRS = 3  # category_remap: the pairs shown before "+N more"


def checked_plan(plan: ExperimentPlan | None, mutation: BaseModel | None) -> ExperimentPlan:
    """The plan as it runs: the operator, parameters, share and seed of the validated `mutation` (bounds checked,
    values coerced), with the planner's rationale and assumptions. Without a mutation, the plan as proposed."""
    plan = plan or ExperimentPlan()
    if mutation is None:
        return plan
    params = mutation.model_dump(mode="json")
    op, fraction, seed = params.pop("op", plan.op), params.pop("fraction", plan.fraction), params.pop("seed", plan.seed)
    return plan.model_copy(update={"op": op, "params": params, "fraction": fraction, "seed": seed})


def dataset_name(dataset_urn: str) -> str:
    """`urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)` -> the dataset's name."""
    return dataset_urn.split(",")[1] if dataset_urn.count(",") >= 2 else dataset_urn


def change_tested(plan: ExperimentPlan, target: str) -> str:
    """One sentence: the change on `target` (e.g. `payments.public.transactions.amount`), the share of rows and the
    seed, the rationale, and what was assumed. E.g. `scale payments.public.transactions.amount ×100 on 100% of rows
    (seed 0) — dollars → cents multiplies every amount by 100. Assumed: no share given: 100% of rows.`"""
    if plan.structural is not None:
        what = f"renamed to {plan.renamed_to}" if plan.renamed_to else plan.structural
        text = f"column {target} {what}, judged by the policy's structural rule (no experiment)"
        rationale = _clause(plan.rationale)
        return f"{text} — {rationale}." if rationale else f"{text}."
    if plan.op is None:
        return f"no experiment on {target}: {_clause(plan.refusal or 'the change could not be modelled')}."
    render = _ACTIONS.get(plan.op)
    action = render(target, plan.params) if render is not None else _generic(plan.op, target, plan.params)
    text = f"{action} on {_percent(plan.fraction)} of rows (seed {plan.seed})"
    rationale = _clause(plan.rationale)
    text = f"{text} — {rationale}." if rationale else f"{text}."
    assumptions = [a for a in (_clause(a) for a in plan.assumptions) if a]
    return f"{text} Assumed: {'; '.join(assumptions)}." if assumptions else text


def planned_experiment(plan: ExperimentPlan, target: str) -> str:
    """`Planned experiment: <change_tested>`: what the chat says before the experiment runs."""
    return f"{PLANNED}: {change_tested(plan, target)}"


def _clause(text: str | None) -> str:
    """A clause without its closing full stop or surrounding blanks, on one line."""
    return " ".join((text or "").split()).rstrip(". ")


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.4g}%"


def _num(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return repr(value) if isinstance(value, str) else str(value)
    return f"{value:g}"


def _signed(value: Any) -> str:
    return f"{value:+g}" if isinstance(value, int | float) and not isinstance(value, bool) else f"+{_num(value)}"


def _quoted(value: Any) -> str:
    return repr(value) if isinstance(value, str) else _num(value)


def _scale(target: str, p: Mapping[str, Any]) -> str:
    return f"scale {target} ×{_num(p.get('factor'))}"


def _shift(target: str, p: Mapping[str, Any]) -> str:
    return f"shift {target} {_signed(p.get('offset'))}"


def _cyclic_shift(target: str, p: Mapping[str, Any]) -> str:
    return f"cyclically shift {target} {_signed(p.get('offset'))} mod {_num(p.get('period'))}"


def _round(target: str, p: Mapping[str, Any]) -> str:
    decimals = p.get("decimals")
    return f"round {target} to {_num(decimals)} decimal{'' if decimals == 1 else 's'}"


def _clip(target: str, p: Mapping[str, Any]) -> str:
    lower, upper = p.get("lower"), p.get("upper")
    low = "−∞" if lower is None else _num(lower)
    high = "+∞" if upper is None else _num(upper)
    return f"clip {target} to [{low}, {high}]"


def _noise(target: str, p: Mapping[str, Any]) -> str:
    std = p.get("relative_std")
    size = f"±{std * 100:.4g}%" if isinstance(std, int | float) and not isinstance(std, bool) else f"±{_num(std)}"
    return f"add Gaussian noise {size} (relative std) to {target}"


def _remap(target: str, p: Mapping[str, Any]) -> str:
    mapping = p.get("mapping")
    if not isinstance(mapping, Mapping) or not mapping:
        return f"remap categories of {target}"
    pairs = [f"{_quoted(old)} → {_quoted(new)}" for old, new in list(mapping.items())[:_MAX_PAIRS]]
    more = f", +{len(mapping) - _MAX_PAIRS} more" if len(mapping) > _MAX_PAIRS else ""
    return f"remap categories of {target} {', '.join(pairs)}{more}"


def _generic(op: str, target: str, p: Mapping[str, Any]) -> str:
    params = ", ".join(f"{k}={_quoted(v)}" for k, v in p.items())
    return f"{op} {target}" + (f" ({params})" if params else "")


_ACTIONS: dict[str, Callable[[str, Mapping[str, Any]], str]] = {
    "scale": _scale,
    "shift": _shift,
    "cyclic_shift": _cyclic_shift,
    "round": _round,
    "clip": _clip,
    "noise": _noise,
    "null_inject": lambda target, _: f"set {target} to null",
    "category_remap": _remap,
    "unseen_category": lambda target, p: f"replace {target} with the unseen category {_quoted(p.get('value'))}",
    "sign_flip": lambda target, _: f"flip the sign of {target}",
    "shuffle": lambda target, _: f"shuffle {target} across rows",
    "constant": lambda target, p: f"set {target} to the constant {_quoted(p.get('value'))}",
}
"""How each allowlisted operator (tools/mutations) reads; an operator missing here reads as `op target (params)`."""
