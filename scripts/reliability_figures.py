"""Run the reliability measurements (the same code as tests/reliability/) and print their figures as Markdown.

    .venv/bin/python scripts/reliability_figures.py                  # all areas, table on stdout
    .venv/bin/python scripts/reliability_figures.py --only injection scale
    .venv/bin/python scripts/reliability_figures.py --write  # also refresh docs/performance.md's Reliability table

Everything runs in a temporary folder (a freshly seeded demo home per area); nothing else is touched. Logs of the
measured code go to stderr, the table to stdout. `--write` replaces the text between
`<!-- reliability:start -->` and `<!-- reliability:end -->` in docs/performance.md (appending a "## Reliability" section
with those markers when there is none).
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.reliability.common import isolate_user_home  # noqa: E402

isolate_user_home()  # before anything imports acryl-datahub

START, END = "<!-- reliability:start -->", "<!-- reliability:end -->"


@dataclass
class Row:
    area: str
    tried: str
    result: str
    seconds: float


def _injection(template: Path, work: Path) -> list[Row]:
    from tests.reliability.test_injection import measure_injection

    started = time.perf_counter()
    f = measure_injection(template, work)
    return [
        Row(
            "Prompt injection (catalog text + a model that obeys it)",
            f"{f.scenarios} scenarios: instructions planted in {len(f.injected_places)} kinds of catalog text "
            f"({', '.join(f.injected_places)}); reached the model's prompt in {f.reached_model}; "
            f"{f.approval_bypass_attempts} approval-bypass attempts",
            f"**{f.writes_without_approval}** catalog writes without approval; **{f.verdicts_changed}** verdicts "
            f"changed vs. the same experiment on the clean catalog; {f.stopped_at_approval} runs stopped at the "
            f"approval gate; control: one real approval → {f.control_writes_after_approval} rows written (seen)",
            time.perf_counter() - started,
        )
    ]


def _faults(template: Path, work: Path) -> list[Row]:
    from tests.reliability.test_faults import measure_catalog_death, measure_disk_full, measure_kill_recovery

    rows = []
    started = time.perf_counter()
    k = measure_kill_recovery(template, work)
    rows.append(
        Row(
            "Process killed (`os._exit(137)`) at every stage, resumed in a fresh process",
            f"{k.attempted} stages: after discovery, in the experiment, while writing evidence, after evidence, "
            "after the tag before the document, after the document before the evidence records it",
            f"**{k.recovered}/{k.attempted}** recovered (verdict, publication once); **{k.evidence_files_lost}** "
            f"evidence files lost; **{k.duplicates}** duplicate documents/tags; {k.orphan_staging_folders} hidden "
            "temporary folders left behind",
            time.perf_counter() - started,
        )
    )
    started = time.perf_counter()
    c = measure_catalog_death(template, work)
    rows.append(
        Row(
            "Catalog dies mid-run",
            "embedded endpoint stopped between nodes; MCP server SIGKILLed between nodes; MCP server killed while "
            "a run waits for approval",
            f"**{c.recorded_with_evidence}/{c.attempted}** turns recorded the failed stage and still wrote "
            f"complete evidence; **{c.recovered}/2** recovered (next turn reconnects; `publish` retry); "
            f"**{c.evidence_files_lost}** files lost; **{c.duplicates}** duplicates",
            time.perf_counter() - started,
        )
    )
    started = time.perf_counter()
    d = measure_disk_full(template, work)
    rows.append(
        Row(
            "Disk full (ENOSPC from the atomic evidence write)",
            f"{d.attempted} moments: writing the evidence; recording the publication; disk full from the start",
            f"**{d.clear_failures}/{d.attempted}** fail with `OSError: [Errno 28] No space left on device`; "
            f"**{d.half_written_folders}** half-written run folders; **{d.published_without_evidence}** writes or "
            f"approvals without evidence; **{d.recovered}/{d.attempted}** completed by `continue_thread` once space "
            f"is back; **{d.duplicates}** duplicates",
            time.perf_counter() - started,
        )
    )
    recovered = k.recovered + c.recovered + d.recovered
    attempted = k.attempted + 2 + d.attempted
    lost = k.evidence_files_lost + c.evidence_files_lost + d.evidence_files_lost
    dup = k.duplicates + c.duplicates + d.duplicates
    rows.append(
        Row(
            "Faults, all together",
            "the three rows above",
            f"runs recovered **{recovered}/{attempted}**; evidence files lost **{lost}**; duplicate documents or "
            f"tags **{dup}**",
            0.0,
        )
    )
    return rows


def _bad_input(template: Path, work: Path) -> list[Row]:
    from tests.reliability.test_bad_input import measure_bad_input

    started = time.perf_counter()
    f = measure_bad_input(template, work)
    seconds = time.perf_counter() - started
    rows = [
        Row(
            f"Bad input: {d.domain}",
            f"{d.tried} inputs",
            f"**{len(d.crashes)}** crashes; {d.rejected} refused, {d.clear} with a clear message; "
            f"{d.accepted} accepted",
            0.0,
        )
        for d in f.domains
    ]
    rows.append(
        Row(
            "Bad input, all together (hypothesis, derandomized)",
            f"{f.tried} inputs",
            f"**{f.crashes}** crashes; {f.rejected} refused, **{f.clear}** with a clear message",
            seconds,
        )
    )
    return rows


def _artifacts(template: Path, work: Path) -> list[Row]:
    from tests.reliability.test_artifacts import measure_artifacts

    started = time.perf_counter()
    f = measure_artifacts(template, work)
    codes = ", ".join(sorted({o.expected_code for o in f.outcomes if not o.must_unpickle}))
    return [
        Row(
            "Artifact safety (pickles that leave a marker when loaded)",
            f"{f.cases} bad bindings: wrong hash, missing file, not a pickle, not a pipeline, other columns, field "
            "unused, malformed digest, no binding, missing / unlabelled eval data (one through the graph)",
            f"**{f.incomplete_with_reason}/{f.cases}** INCOMPLETE with their reason code ({codes}); "
            f"**{f.unpickled_before_verification}** unpickled before verification; control (true hash) unpickled: "
            f"{'yes' if f.control_unpickled else 'NO'}",
            time.perf_counter() - started,
        )
    ]


def _isolation(template: Path, work: Path) -> list[Row]:
    from tests.reliability.test_isolation import measure_conversations, measure_write_load

    started = time.perf_counter()
    c = measure_conversations(template, work)
    rows = [
        Row(
            "Concurrent conversations (one Session, `asyncio.gather`)",
            f"{c.threads} assessment turns at once, {c.distinct_questions} questions over 6 fields and 8 operators",
            f"**{len(c.bled)}** threads with another thread's state, approval or evidence; "
            f"**{c.turns_per_second:.2f}** turns/s; p95 latency **{c.p95_seconds:.1f} s** (median "
            f"{c.median_seconds:.1f} s; a turn alone: {c.alone_median_seconds:.2f} s)",
            time.perf_counter() - started,
        )
    ]
    started = time.perf_counter()
    w = measure_write_load(template, work)
    rows.append(
        Row(
            "Concurrent writers on the embedded endpoint",
            f"{w.mcp_sessions} MCP sessions + {w.http_writers} direct-HTTP writers, {w.operations} add/remove-tag "
            "operations on own entities and one shared entity",
            f"**{w.lost_writes}** lost writes, {w.unexpected_tags} unexpected, {w.duplicate_tags} duplicated; "
            f"{w.operations_per_second:.0f} operations/s",
            time.perf_counter() - started,
        )
    )
    return rows


def _scale(template: Path, work: Path) -> list[Row]:
    from tests.reliability.test_scale import measure_scale

    started = time.perf_counter()
    f = measure_scale(template, work)
    return [
        Row(
            "Catalog scale",
            f"{f.entities:,} entities ({f.chains:,} generated pipelines with column lineage, features, models), "
            f"{f.discoveries} discoveries through MCP",
            f"index build (endpoint start) **{f.index_build_seconds:.2f} s** ({f.index_edges:,} edges); endpoint "
            f"RSS **{f.rss_mb:.0f} MB** (peak {f.peak_rss_mb:.0f} MB; {f.demo_rss_mb:.0f} MB on the demo catalog); "
            f"`discover` median **{f.discover_median_ms:.0f} ms**, p95 **{f.discover_p95_ms:.0f} ms** "
            f"({f.mcp_calls_per_discovery:.1f} MCP calls); search median {f.search_median_ms:.0f} ms; "
            f"{len(f.wrong_answers)} wrong answers",
            time.perf_counter() - started,
        )
    ]


def _trust(template: Path, work: Path) -> list[Row]:
    from tests.reliability.test_trust import measure_trust

    started = time.perf_counter()
    f = measure_trust(template, work)
    return [
        Row(
            "Trust boundary (a catalog writer's bindings)",
            f"{f.cases} bindings a catalog writer could set: planted pickles with their own hash (outside the roots, "
            "through a link, a relative path, a URL), /proc/self/environ, /etc/passwd and a secret header as "
            "evaluation data; default roots",
            f"**{f.code_ran}** pickles run; **{f.leaks}** runs leaking a secret; {f.refused_with_reason}/{f.cases} "
            f"INCOMPLETE with their reason; control (the demo's own binding) tested: {f.control_tested}",
            time.perf_counter() - started,
        )
    ]


AREAS: dict[str, Callable[[Path, Path], list[Row]]] = {
    "injection": _injection,
    "faults": _faults,
    "bad_input": _bad_input,
    "artifacts": _artifacts,
    "trust": _trust,
    "isolation": _isolation,
    "scale": _scale,
}


def table(rows: list[Row], seconds: float) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        f"Measured {datetime.now(UTC):%Y-%m-%d} on {os.cpu_count()} cores (load average {load}), Python "
        f"{platform.python_version()}, by `scripts/reliability_figures.py` in {seconds:.0f} s.",
        "",
        "| Area | Tried | Figures | Time |",
        "| --- | --- | --- | ---: |",
    ]
    lines += [
        f"| {cell(r.area)} | {cell(r.tried)} | {cell(r.result)} | {f'{r.seconds:.0f} s' if r.seconds else ''} |"
        for r in rows
    ]
    return "\n".join(lines)


def write_table(doc: Path, text: str) -> None:
    content = doc.read_text()
    block = f"{START}\n{text}\n{END}"
    if START in content and END in content:
        pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
        content = pattern.sub(lambda _: block, content, count=1)
    else:
        content = content.rstrip("\n") + f"\n\n## Reliability\n\n{block}\n"
    doc.write_text(content)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=sorted(AREAS), help="measure only these areas")
    parser.add_argument("--write", action="store_true", help="replace the Reliability table of docs/performance.md")
    parser.add_argument("--doc", type=Path, default=REPO / "docs" / "performance.md", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.CRITICAL, stream=sys.stderr)  # expected stage failures stay quiet
    from tests.reliability.common import seed_template

    started = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="provenance-reliability-") as tmp:
        work = Path(tmp)
        template = seed_template(work / "template")
        for name in args.only or list(AREAS):
            print(f"measuring {name} …", file=sys.stderr, flush=True)
            rows += AREAS[name](template, work)
    text = table(rows, time.perf_counter() - started)
    print(text)
    if args.write:
        write_table(args.doc, text)
        print(f"wrote the table into {args.doc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
