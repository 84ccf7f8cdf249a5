"""Rows a model scored on the base side that are gone on the head side (a filter or join change, seen by
`provenance diff`). A row that disappears is a decision that changed as surely as a flip, so its share is judged
by the task's share band (the flip-rate band for classifiers, the moved-share band for regressors); rows that are
new have no decision today to compare with and are reported, never judged."""

from __future__ import annotations

from policies.metrics import TaskName
from policies.policy import Policy
from policies.rules_common import band_reason
from policies.sections import Band
from policies.verdicts import Reason, Verdict


def rows_gone_reason(gone: int, scored_today: int, task: TaskName, policy: Policy) -> Reason:
    """The verdict on `gone` of the `scored_today` base rows being absent from the head relation."""
    band = policy.share_band(task)
    if band is None:
        return Reason(
            code="rows_gone_not_judged",
            severity=Verdict.INCOMPLETE,
            metric="rows_gone_share",
            message=f"policy {policy.name} v{policy.version} has no share band for {task} models, so the "
            f"{gone} rows gone of {scored_today} cannot be judged",
        )
    share = gone / scored_today if scored_today else 0.0
    detail = f" ({gone} of {scored_today} rows the model scores today; the {task} share band)"
    reason = band_reason(
        "rows_gone_share", "rows gone", share, Band(warning=band[0], block=band[1]), percent=True, detail=detail
    )
    if share == 0:
        return reason.model_copy(update={"message": f"no row the model scores today is gone (of {scored_today})"})
    return reason
