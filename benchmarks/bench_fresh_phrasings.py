"""The offline planner over the phrasing tables separate readers wrote (see
tests/agent/planning/separate_tables.py): right / refused / confident-wrong, as `test_phrasings.py` judges.

    .venv/bin/python -m benchmarks.bench_fresh_phrasings [-v] [TABLE]

Without TABLE, every table is scored.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from tests.agent.planning.separate_tables import TABLES, judged


def main() -> None:
    paths = [Path(a) for a in sys.argv[1:] if not a.startswith("-")] or list(TABLES)
    for path in paths:
        results, names = judged(path)
        counts = Counter(j.verdict for j in results)
        total = len(results)
        print(
            f"{path.name}: {total} entries judged ({names} naming a table or column not in the catalog, counted "
            f"apart): right {counts['right']} ({counts['right'] / total:.0%}), refused {counts['refused']}, "
            f"confident-wrong {counts['wrong']}"
        )
        if "-v" in sys.argv:
            for j in results:
                if j.verdict != "right":
                    print(f"  {j.verdict:8} {j.kind:40} | {j.entry.text} | got {j.got}")


if __name__ == "__main__":
    main()
