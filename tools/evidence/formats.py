"""How a number of each kind is written wherever a person reads it (report.md, the chat, the terminal): None as
"n/a", rates as percentages, AUC with 3 decimals, small p-values in scientific notation, and quantities on a
model's own scale (errors, predictions, tolerances) with 4 significant digits.

No heavy imports: the CLI's terminal rendering uses it. The two shares the policy's reasons write (`pct`,
`share_setting`) live in policies/text.py, which owns them, and are re-exported here.
"""

from __future__ import annotations

import math

from policies import NA as NA
from policies import pct as pct
from policies import plural as plural
from policies import share_range as share_range
from policies import share_setting as share_setting


def na(value: object) -> str:
    return NA if value is None else str(value)


def points(value: float | None, digits: int = 2) -> str:
    """A change of a share, signed, in percentage points (a drop of accuracy from 91% to 85% is -6.00 pp)."""
    return NA if value is None else f"{value * 100:+.{digits}f} pp"


def auc(value: float | None) -> str:
    return NA if value is None else f"{value:.3f}"


def signed(value: float | None, digits: int = 4) -> str:
    return NA if value is None else f"{value:+.{digits}f}"


def decimal(value: float | None, digits: int = 4) -> str:
    return NA if value is None else f"{value:.{digits}f}"


def pvalue(value: float | None) -> str:
    if value is None:
        return NA
    if value == 0:  # underflow (or a zero-variance difference): "0" would read as certainty
        return "< 1e-300"
    return f"{value:.2e}" if value < 1e-3 else f"{value:.4f}"


def count(value: int | None) -> str:
    return NA if value is None else f"{value:,}"


def seconds(value: float | None) -> str:
    return NA if value is None else f"{value:.2f} s"


def sig(value: float | None, digits: int = 4, *, sign: bool = False) -> str:
    """A quantity on the model's own scale (a regressor's MAE may be 0.0123 or 12,345): ``digits`` significant
    digits in fixed notation with thousands separators; scientific only beyond what fixed notation reads well."""
    if value is None:
        return NA
    plus = "+" if sign else ""
    if value == 0 or not math.isfinite(value):
        return f"{value:{plus}g}"
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude >= 9 or magnitude < -4:
        return f"{value:{plus}.{digits - 1}e}"
    return f"{value:{plus},.{max(digits - 1 - magnitude, 0)}f}"


def relative(value: float | None) -> str:
    """A relative change (delta / baseline), signed percent; None (a zero baseline) says why it is missing."""
    return "n/a (baseline 0)" if value is None else f"{value * 100:+.1f}%"
