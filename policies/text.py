"""How the policy writes a share in a reason: a measured share (`pct`) and a configured one (`share_setting`).
The policy owns them because its reasons are text; tools/evidence/formats.py writes every other number and
re-exports these two, so a share reads the same in a reason, report.md, the chat and the terminal."""

from __future__ import annotations

NA = "n/a"


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


def share_range(low: float | None, high: float | None, digits: int = 1) -> str:
    """An interval of shares, written one way everywhere: "11.9% to 12.8%". Where `pct` at `digits` would mark a bound
    ("< 0.1%", "> 99.9%") or write both bounds alike, more digits are shown (up to 4): 0.9991–0.99996 is "99.910% to
    99.996%", not "99.9%-> 99.9%"; a bound still beyond 4 digits keeps its marker ("99.9990% to > 99.9999%")."""
    if low is None or high is None:
        return NA
    for shown in range(digits, 5):
        a, b = pct(low, shown), pct(high, shown)
        if not a.startswith(("<", ">")) and not b.startswith(("<", ">")) and (a != b or low == high):
            return f"{a} to {b}"
    return f"{pct(low, 4)} to {pct(high, 4)}"


def plural(count: int, noun: str, many: str | None = None) -> str:
    """ "1 row", "2 rows", "1,200 rows": the count with its noun in the right number."""
    return f"{count:,} {noun if count == 1 else many or noun + 's'}"
