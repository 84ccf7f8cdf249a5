"""How a number of each kind is written wherever a person reads it (report.md, the chat, the terminal): None as
"n/a", rates as percentages, AUC with 3 decimals, small p-values in scientific notation, and quantities on a
model's own scale (errors, predictions, tolerances) with 4 significant digits.

A leaf module (no imports of ours, no heavy ones): the CLI's terminal rendering uses it, and so do the policy's
reasons (policies may import it, tests/test_import_rules.py).
"""

from __future__ import annotations

import math

NA = "n/a"


def na(value: object) -> str:
    return NA if value is None else str(value)


def pct(value: float | None, digits: int = 2) -> str:
    """A measured share in percent. Never rounded to 100% or 0% when it is not that: 7,199 of 7,200 is "> 99.9%"
    (at one decimal), not "100.0%"."""
    if value is None:
        return NA
    text = f"{value * 100:.{digits}f}%"
    bound = 10.0**-digits
    if text.startswith("100") and value < 1:
        return f"> {100 - bound:.{digits}f}%"
    if float(text[:-1]) == 0 and value > 0:
        return f"< {bound:.{digits}f}%"
    return text


def share_setting(value: float) -> str:
    """A share someone configured (a threshold band, a confidence level) as they wrote it, in percent with no
    padding: 0.05 -> "5%", 0.995 -> "99.5%", 0.0025 -> "0.25%". A measured share is `pct`'s."""
    return f"{value * 100:.3g}%"


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
