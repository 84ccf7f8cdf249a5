"""Rerun the red-team pass's high findings (a catalog writer runs code or reads files on the Provenance host) against
this checkout, and exit non-zero if any comes back.

    .venv/bin/python scripts/redteam.py

A freshly seeded demo home in a temporary folder; the fraud detector's binding is rewritten as a catalog writer
could (tests/reliability/test_trust.py builds the cases) and each is assessed through the real path with the
default artifact roots. Prints one line per case: the model's verdict and reason codes, whether a planted pickle ran,
and which secret (an environment variable set for the run, /etc/passwd's first line, PATH) reached the run's files.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.reliability.common import isolate_user_home  # noqa: E402

isolate_user_home()  # before anything imports acryl-datahub


def main() -> int:
    from tests.reliability.common import seed_template
    from tests.reliability.test_trust import measure_trust

    with tempfile.TemporaryDirectory(prefix="provenance-redteam-") as tmp:
        work = Path(tmp)
        figures = measure_trust(seed_template(work / "template"), work)
    for o in figures.outcomes:
        status = "held" if o.ok else "BROKEN"
        ran = "; CODE RAN" if o.code_ran else ""
        leaked = f"; LEAKED {', '.join(repr(x[:24]) for x in o.leaked)}" if o.leaked else ""
        print(f"[{status}] {o.name}: {o.verdict} ({', '.join(o.codes) or 'no reason'}){ran}{leaked}")
    print(
        f"\n{figures.refused_with_reason}/{figures.cases} refused with a reason; {figures.code_ran} pickles ran; "
        f"{figures.leaks} runs leaked; control tested: {figures.control_tested}"
    )
    broken = figures.code_ran or figures.leaks or figures.refused_with_reason != figures.cases
    return 1 if broken or not figures.control_tested else 0


if __name__ == "__main__":
    raise SystemExit(main())
