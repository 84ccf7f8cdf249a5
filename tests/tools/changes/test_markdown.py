"""The pull-request summary, checked by content: verdict first, one table per change with the key numbers and their
intervals, evidence links, the structural and unmapped sections, the footer, the marker and the size limit."""

from __future__ import annotations

from pathlib import Path

from policies import PairedChange, Verdict
from tools.changes.markdown import COMMENT_LIMIT, MARKER, render_markdown
from tools.changes.result import (
    CheckResult,
    EntryResult,
    Interval,
    ModelOutcome,
    PolicyRef,
    combined_verdict,
)
from tools.changes.schema import SourceRef
from tools.evidence.task_views import MetricChange

URN = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"
POLICY = PolicyRef(name="default", version=2, sha256="ab" * 32)


def fraud(verdict: Verdict, flip: float, after: float) -> ModelOutcome:
    return ModelOutcome(
        urn="urn:li:mlModel:(urn:li:dataPlatform:mlflow,fraud_detector,PROD)",
        name="fraud_detector",
        verdict=verdict,
        reasons=[f"flip rate {flip:.1%} >= 10% block threshold"],
        task="binary",
        flip_rate=Interval(value=flip, low=flip - 0.011, high=flip + 0.012),
        performance=MetricChange(
            name="AUC",
            change=PairedChange(
                baseline=0.912, mutated=after, delta=after - 0.912, ci_low=-0.1854, ci_high=-0.1601, p_value=1e-9
            ),
        ),
        failures=0,
        failure_rate=0.0,
        rows=7200,
    )


def change(verdict: Verdict, index: int, home: Path, models: list[ModelOutcome], **extra: object) -> EntryResult:
    run_id = f"20260101T000000Z-run{index}"
    return EntryResult(
        kind="change",
        index=index,
        dataset=URN,
        field="amount",
        op="scale",
        params={"factor": 100},
        fraction=1.0,
        seed=0,
        verdict=verdict,
        reasons=[f"{m.name}: {m.verdict}" for m in models] + ["lineage could not be read completely: x"],
        models=models,
        run_id=run_id,
        evidence_dir=str(home / "runs" / run_id),
        report=str(home / "runs" / run_id / "report.md"),
        publication="not_requested",
        **extra,  # type: ignore[arg-type]
    )


def result_of(entries: list[EntryResult]) -> CheckResult:
    verdict = combined_verdict(entries)
    codes = {"PASS": 0, "WARNING": 10, "BLOCK": 20, "INCOMPLETE": 30}
    return CheckResult(
        file="CHANGES.yml",
        verdict=verdict,
        exit_code=codes[verdict],
        entries=entries,
        policy=POLICY,
        provenance_version="9.8.7",
    )


def sample(home: Path) -> CheckResult:
    regression = ModelOutcome(
        urn="urn:li:mlModel:(urn:li:dataPlatform:mlflow,review_time,PROD)",
        name="review_time",
        verdict=Verdict.WARNING,
        reasons=["MAE rose 12%"],
        task="regression",
        performance=MetricChange(
            name="MAE", change=PairedChange(baseline=1.5, mutated=1.68, delta=0.18, ci_low=0.1, ci_high=0.26)
        ),
        failures=3,
        failure_rate=3 / 900,
        rows=900,
    )
    unmeasured = ModelOutcome(
        urn="urn:li:mlModel:x", name="merchant|risk", verdict=Verdict.INCOMPLETE, reasons=["hash mismatch"]
    )
    return result_of(
        [
            change(
                Verdict.BLOCK,
                0,
                home,
                [fraud(Verdict.BLOCK, 0.312, 0.740), regression, unmeasured],
                note="amounts now in cents",
                source=SourceRef(file="models/transactions.sql", line=3, column="amount"),
                confidence="high",
            ),
            change(Verdict.PASS, 1, home, [fraud(Verdict.PASS, 0.0, 0.912)]),
            EntryResult(
                kind="structural",
                index=0,
                dataset=URN,
                field="account_age_days",
                change="renamed",
                renamed_to="account_age",
                verdict=Verdict.BLOCK,
                reasons=["fraud_detector: BLOCK"],
                models=[
                    ModelOutcome(
                        urn="urn:li:mlModel:f",
                        name="fraud_detector",
                        verdict=Verdict.BLOCK,
                        reasons=["input column account_age_days is renamed: the model cannot be scored without it"],
                    )
                ],
            ),
            EntryResult(
                kind="unmapped",
                index=0,
                dataset=None,
                field="risk_band",
                source=SourceRef(file="models/transactions.sql", line=9, column="risk_band"),
                verdict=Verdict.INCOMPLETE,
                reasons=["not mappable, review by hand: CASE changed"],
            ),
        ]
    )


def rows(markdown: str, first_cell: str) -> list[list[str]]:
    """The table rows whose first cell is `first_cell`, split into cells."""
    found = []
    for line in markdown.splitlines():
        if line.startswith(f"| {first_cell} |"):
            found.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return found


def test_first_line_is_the_combined_verdict(tmp_path: Path) -> None:
    markdown = render_markdown(sample(tmp_path))
    first = markdown.splitlines()[0]
    assert first.startswith("**BLOCK** ")
    assert "4 entries (2 BLOCK, 1 INCOMPLETE, 1 PASS)" in first and "exit code 20" in first


def test_each_model_row_has_its_numbers_with_intervals(tmp_path: Path) -> None:
    markdown = render_markdown(sample(tmp_path))
    blocked, passed = rows(markdown, "fraud_detector")[:2]
    assert blocked == [
        "fraud_detector",
        "**BLOCK**",
        "31.2% (30.1% to 32.4%)",
        "AUC 0.912 → 0.740",
        "-0.172 (-0.185 to -0.160), p=1e-09",
        "0 of 7200",
        "flip rate 31.2% >= 10% block threshold",
    ]
    assert passed[1:5] == [
        "**PASS**",
        "0.0% (-1.1% to 1.2%)",
        "AUC 0.912 → 0.912",
        "+0.000 (-0.185 to -0.160), p=1e-09",
    ]
    assert passed[6] == ""  # a PASS needs no explanation in the table
    (regression,) = rows(markdown, "review_time")
    assert regression[2:6] == ["n/a", "MAE 1.500 → 1.680", "+0.180 (+0.100 to +0.260)", "3 of 900"]
    (unmeasured,) = rows(markdown, "merchant\\|risk")  # the pipe is escaped, not a column break
    assert unmeasured[1:7] == ["**INCOMPLETE**", "n/a", "n/a", "n/a", "n/a", "hash mismatch"]


def test_entry_headings_context_and_reasons(tmp_path: Path) -> None:
    markdown = render_markdown(sample(tmp_path))
    assert "#### **BLOCK** `payments.public.transactions.amount: scale(factor=100)`" in markdown
    assert "from `models/transactions.sql:3` (column `amount`) · mapping confidence high" in markdown
    assert "note: amounts now in cents" in markdown
    assert "- lineage could not be read completely: x" in markdown
    assert "- fraud_detector: BLOCK" not in markdown.split("### Structural")[0]  # the table already says it


def test_evidence_links_relative_or_under_a_base_url(tmp_path: Path) -> None:
    result = sample(tmp_path / "home")
    relative = render_markdown(result, link_root=tmp_path)
    assert "Evidence: [report](home/runs/20260101T000000Z-run0/report.md) (run `20260101T000000Z-run0`)" in relative
    beside = render_markdown(result, link_root=tmp_path / "summaries")  # the summary written in another folder
    assert "[report](../home/runs/20260101T000000Z-run1/report.md)" in beside and str(tmp_path) not in beside
    absolute = render_markdown(result)  # no folder given (a library caller): the path as recorded
    assert f"[report]({tmp_path}/home/runs/20260101T000000Z-run1/report.md)" in absolute
    run_page = "https://github.com/o/r/actions/runs/42"
    artifact = render_markdown(result, evidence_artifact=run_page, link_root=tmp_path)
    assert (
        f"Evidence: `20260101T000000Z-run0/report.md` in the [evidence artifact]({run_page}) "
        "(run `20260101T000000Z-run0`)"
    ) in artifact
    assert f"{run_page}/20260101T000000Z" not in artifact  # no per-file link GitHub would not serve
    based = render_markdown(result, evidence_url_base="https://ci.example/artifacts/")
    assert "[report](https://ci.example/artifacts/20260101T000000Z-run0/report.md)" in based
    assert str(tmp_path) not in based


def test_structural_and_unmapped_sections(tmp_path: Path) -> None:
    markdown = render_markdown(sample(tmp_path))
    structural = markdown.split("### Structural changes (dropped or renamed columns)")[1].split("### Not mappable")[0]
    assert "#### **BLOCK** `payments.public.transactions.account_age_days: column renamed to account_age`" in structural
    assert rows(structural, "fraud_detector") == [
        [
            "fraud_detector",
            "**BLOCK**",
            "input column account_age_days is renamed: the model cannot be scored without it",
        ]
    ]
    unmapped = markdown.split("### Not mappable: review by hand")[1]
    assert rows(unmapped, "**INCOMPLETE**") == [
        [
            "**INCOMPLETE**",
            "`models/transactions.sql:9`",
            "`risk_band`",
            "unresolved",
            "not mappable, review by hand: CASE changed",
        ]
    ]


def test_footer_names_policy_and_version_and_ends_with_the_marker(tmp_path: Path) -> None:
    markdown = render_markdown(sample(tmp_path))
    assert markdown.rstrip("\n").endswith(MARKER)
    assert f"Policy `default` v2 (sha256 `{'ab' * 6}`) · Provenance 9.8.7" in markdown


def test_an_empty_check_passes_and_says_so() -> None:
    markdown = render_markdown(result_of([]))
    assert markdown.startswith("**PASS** Provenance check of `CHANGES.yml`: no entries, nothing to assess")
    assert "###" not in markdown


def test_a_huge_result_is_cut_under_the_limit_with_a_note(tmp_path: Path) -> None:
    models = [fraud(Verdict.BLOCK, 0.3, 0.74).model_copy(update={"name": f"model_{i}"}) for i in range(40)]
    entries = [change(Verdict.BLOCK, i, tmp_path, models) for i in range(60)]
    full = render_markdown(result_of(entries), limit=10**9)
    assert len(full) > COMMENT_LIMIT  # the case is real: uncut, GitHub would refuse it
    cut = render_markdown(result_of(entries))
    assert len(cut) <= COMMENT_LIMIT
    shown = cut.count("#### **BLOCK**")
    assert 0 < shown < 60
    assert f"_{60 - shown} more entries not shown" in cut
    assert cut.rstrip("\n").endswith(MARKER) and cut.startswith("**BLOCK**")
    small = render_markdown(result_of(entries), limit=5_000)
    assert len(small) <= 5_000 and "60 more entries not shown" in small
