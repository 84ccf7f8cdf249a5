"""The offline planner over a phrasing table it was never tuned on (issue 37): `tests/agent/planning/fresh_table.yaml`,
150 messages written by a separate reader from a description of the users, who never saw the planner or its own
table. Judged as `tests/agent/planning/test_phrasings.py` judges the tuned table (right / refused /
confident-wrong); entries that name a table or column not in the catalog are counted apart (the planner does not
resolve names: discovery does, tools/catalog/resolve.py).

    .venv/bin/python -m benchmarks.bench_fresh_phrasings [-v]
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from agent.schemas import Intent
from tests.agent.planning.phrasings import FIELDS, Phrasing, Plan, Refuse
from tests.agent.planning.test_phrasings import judge

TABLE = Path(__file__).resolve().parent.parent / "tests" / "agent" / "planning" / "fresh_table.yaml"


def phrasings() -> tuple[list[Phrasing], int]:
    entries: list[dict[str, Any]] = yaml.safe_load(TABLE.read_text())
    by_name = {f.field: f for f in FIELDS}
    out: list[Phrasing] = []
    names = 0
    for entry in entries:
        if entry.get("unknown_name") or (entry.get("ask") and not entry.get("plan") and _bad_name(entry, by_name)):
            names += 1
            continue
        intent = Intent(entry["intent"])
        expect: Plan | Refuse | None = None
        field = None
        if intent is Intent.ASSESS:
            planned = entry.get("plan")
            if planned:
                field = by_name[planned["field"]]
                params = {k: v for k, v in (planned.get("params") or {}).items() if v is not None}
                expect = Plan(planned["op"], params, float(planned.get("fraction", 1.0)), int(planned.get("seed", 0)))
            else:
                field = by_name.get(_field_of(entry), FIELDS[0])
                expect = Refuse(())
        out.append(Phrasing(entry["says"], "fresh", intent, entry.get("subject"), field, expect, entry.get("why", "")))
    return out, names


def _field_of(entry: dict[str, Any]) -> str:
    subject = str(entry.get("subject") or "")
    return subject.split(".")[-1]


def _bad_name(entry: dict[str, Any], by_name: dict[str, Any]) -> bool:
    return _field_of(entry) not in by_name


def main() -> None:
    table, names = phrasings()
    judged = [judge(p) for p in table]
    counts = Counter(j.verdict for j in judged)
    total = len(judged)
    print(
        f"fresh table: {total} entries judged ({names} naming a table or column not in the catalog, counted apart): "
        f"right {counts['right']} ({counts['right'] / total:.0%}), refused {counts['refused']}, "
        f"confident-wrong {counts['wrong']}"
    )
    if "-v" in sys.argv:
        for j in judged:
            if j.verdict != "right":
                print(f"  {j.verdict:8} {j.kind:40} | {j.entry.text} | got {j.got}")


if __name__ == "__main__":
    main()
