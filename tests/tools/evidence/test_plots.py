"""Evidence plots: valid PNGs, deterministic bytes, degenerate data, thread safety, size (speed: bench_plots.py)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure
from sklearn.metrics import roc_auc_score, roc_curve

from policies.metrics import Task
from tools.evidence import plots, plots_multiclass, plots_regression
from tools.evidence.plots import roc_points, slugify, thin_curve, write_plots
from tools.experiment.metrics import compute_metrics

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MAX_BYTES = 150_000
Arrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def synthetic(n: int, seed: int = 1, failures: int = 0) -> Arrays:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(np.int8)
    baseline = 1 / (1 + np.exp(-(2.0 * y - 1.0 + rng.normal(0, 1, n))))
    mutated = np.where(rng.random(n) < 0.2, np.clip(baseline + rng.normal(0, 0.2, n), 0, 1), baseline)
    failed = np.zeros(n, dtype=bool)
    failed[:failures] = True
    return y, baseline, mutated, failed


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every "not computable" explanation a plot draws."""
    seen: list[str] = []
    original = plots._not_computable

    def record(figure: Figure, why: str) -> None:
        seen.append(why)
        original(figure, why)

    monkeypatch.setattr(plots, "_not_computable", record)
    return seen


def assert_png(path: Path) -> bytes:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert 1_000 < len(data) < MAX_BYTES
    return data


def test_writes_two_valid_pngs(tmp_path: Path, spy: list[str]) -> None:
    files = write_plots(tmp_path, "fraud-v3", *synthetic(5_000, failures=40))
    assert files == {"roc": "fraud-v3-roc.png", "shift": "fraud-v3-shift.png"}
    for name in files.values():
        data = assert_png(tmp_path / name)
        assert b"matplotlib" not in data  # no "Software" chunk: bytes do not depend on the library version
    assert spy == []
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(files.values())  # no temporary files left


def test_output_is_deterministic(tmp_path: Path) -> None:
    arrays = synthetic(20_000, failures=5)
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    write_plots(first, "m", *arrays)
    write_plots(second, "m", *arrays)
    for name in ("m-roc.png", "m-shift.png"):
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_all_rows_failed(tmp_path: Path, spy: list[str]) -> None:
    y, baseline, mutated, _ = synthetic(500)
    files = write_plots(tmp_path, "m", y, baseline, np.full(500, np.nan), np.ones(500, dtype=bool))
    for name in files.values():
        assert_png(tmp_path / name)
    assert spy == [
        "0 positive and 0 negative scored rows;\nROC AUC needs at least 2 of each class",
        "no row was scored successfully",
    ]


@pytest.mark.parametrize("label", [0, 1])
def test_one_class_only(tmp_path: Path, spy: list[str], label: int) -> None:
    _, baseline, mutated, failed = synthetic(800)
    files = write_plots(tmp_path, "m", np.full(800, label), baseline, mutated, failed)
    assert_png(tmp_path / files["roc"])
    assert_png(tmp_path / files["shift"])
    assert len(spy) == 1 and "ROC AUC needs at least 2 of each class" in spy[0]  # the shift plot still draws


def test_single_positive_matches_metrics_rule(tmp_path: Path, spy: list[str]) -> None:
    y, baseline, mutated, failed = synthetic(300)
    y[:] = 0
    y[0] = 1
    write_plots(tmp_path, "m", y, baseline, mutated, failed)
    assert compute_metrics(y, baseline, mutated, failed).binary.auc is None  # the report says n/a ...
    assert spy and spy[0].startswith("1 positive and 299 negative")  # ... and the plot agrees


def test_no_shift_at_all(tmp_path: Path, spy: list[str]) -> None:
    y, baseline, _, failed = synthetic(1_000)
    files = write_plots(tmp_path, "m", y, baseline, baseline.copy(), failed)
    assert_png(tmp_path / files["shift"])
    assert spy == []


def test_nan_scores_count_as_failed(tmp_path: Path, spy: list[str]) -> None:
    y, baseline, mutated, failed = synthetic(200)
    mutated[:] = np.nan  # the runner marks failures, but a NaN that slipped through must not crash the plots
    write_plots(tmp_path, "m", y, baseline, mutated, failed)
    assert spy[-1] == "no row was scored successfully"


def test_rejects_bad_input(tmp_path: Path) -> None:
    y, baseline, mutated, failed = synthetic(100)
    with pytest.raises(ValueError, match="lengths differ"):
        write_plots(tmp_path, "m", y[:-1], baseline, mutated, failed)
    with pytest.raises(ValueError, match="binary"):
        write_plots(tmp_path, "m", y + 1, baseline, mutated, failed)
    for slug in ("../evil", "a/b", ".hidden", ""):
        with pytest.raises(ValueError, match="file-name safe"):
            write_plots(tmp_path, slug, y, baseline, mutated, failed)
    assert list(tmp_path.iterdir()) == []


def test_slugify() -> None:
    assert slugify("Fraud Scorer (v3)") == "fraud-scorer-v3"
    assert slugify("../../etc/passwd") == "etc-passwd"
    assert slugify("???") == "model"


def test_roc_auc_matches_sklearn_and_metrics_with_ties_and_negatives() -> None:
    rng = np.random.default_rng(5)
    y = rng.random(3_000) < 0.4
    # Heavy ties between classes, plus values one ulp apart (0.3 + 0.2 != 0.5) that must stay distinct.
    tied = np.round(rng.random(3_000), 1) + 0.2 * y
    for scores in (tied, -tied, tied - 0.5, rng.normal(size=3_000)):
        fpr, tpr, auc = roc_points(y, scores)
        want_fpr, want_tpr, _ = roc_curve(y, scores, drop_intermediate=False)  # the same vertices, exactly
        np.testing.assert_array_equal(fpr, want_fpr)
        np.testing.assert_array_equal(tpr, want_tpr)
        assert auc == pytest.approx(roc_auc_score(y, scores), abs=1e-12)
        assert (fpr[0], tpr[0], fpr[-1], tpr[-1]) == (0.0, 0.0, 1.0, 1.0)
        assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
    metrics = compute_metrics(y, tied, tied, np.zeros(3_000, dtype=bool))
    assert roc_points(y, tied)[2] == pytest.approx(metrics.binary.auc.baseline, abs=1e-12)


def test_thin_curve_keeps_ends_and_limits_points() -> None:
    x = np.linspace(0, 1, 50_000) ** 2
    y = np.sqrt(np.linspace(0, 1, 50_000))
    tx, ty = thin_curve(x, y, points=500)
    assert len(tx) <= 500 and (tx[0], ty[0], tx[-1], ty[-1]) == (0.0, 0.0, 1.0, 1.0)
    short = np.array([0.0, 1.0])
    assert thin_curve(short, short)[0] is short


@pytest.mark.slow
def test_concurrent_rendering_matches_sequential(tmp_path: Path) -> None:
    arrays = [synthetic(3_000, seed=s) for s in range(4)]
    sequential = tmp_path / "seq"
    sequential.mkdir()
    for i, a in enumerate(arrays):
        write_plots(sequential, f"m{i}", *a)
    threaded = tmp_path / "threads"
    threaded.mkdir()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda i: write_plots(threaded, f"m{i}", *arrays[i]), range(4)))
    for path in sequential.iterdir():
        assert (threaded / path.name).read_bytes() == path.read_bytes()


def test_million_rows_give_small_valid_pngs(tmp_path: Path) -> None:
    # How fast is printed by benchmarks/bench_plots.py (target 0.5 s of CPU), not asserted here.
    files = write_plots(tmp_path, "big", *synthetic(1_000_000, failures=1_000))
    for name in files.values():
        assert_png(tmp_path / name)


def regression_arrays(n: int, seed: int = 2, failures: int = 0) -> Arrays:
    rng = np.random.default_rng(seed)
    amount = rng.lognormal(3, 1, n)
    y = 2 + 0.05 * amount + rng.normal(0, 1, n)
    baseline = 2 + 0.05 * amount + rng.normal(0, 0.3, n)
    mutated = np.where(rng.random(n) < 0.4, 2 + 0.15 * amount, baseline)
    failed = np.zeros(n, dtype=bool)
    failed[:failures] = True
    mutated[failed] = np.nan
    return y, baseline, mutated, failed


def multiclass_arrays(n: int, k: int = 3, seed: int = 3, failures: int = 0) -> Arrays:
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 1, (n, k))
    baseline = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    changed = logits + np.where(rng.random((n, 1)) < 0.15, rng.normal(0, 2, (n, k)), 0.0)
    mutated = np.exp(changed) / np.exp(changed).sum(axis=1, keepdims=True)
    failed = np.zeros(n, dtype=bool)
    failed[:failures] = True
    mutated[failed] = np.nan
    return np.array([f"c{i}" for i in baseline.argmax(axis=1)], dtype=object), baseline, mutated, failed


@pytest.fixture
def task_spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every "not computable" explanation a regression or multiclass plot draws."""
    seen: list[str] = []

    def record(figure: Figure, why: str) -> None:
        seen.append(why)

    monkeypatch.setattr(plots_regression, "not_computable", record)
    monkeypatch.setattr(plots_multiclass, "not_computable", record)
    return seen


def test_regression_writes_fit_and_change_plots_deterministically(tmp_path: Path, task_spy: list[str]) -> None:
    arrays = regression_arrays(30_000, failures=25)
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    files = write_plots(first, "review", *arrays, task="regression", tolerance=0.2)
    assert files == {"fit": "review-fit.png", "change": "review-change.png"}
    write_plots(second, "review", *arrays, task="regression", tolerance=0.2)
    for name in files.values():
        data = assert_png(first / name)
        assert data == (second / name).read_bytes()  # the scatter's subsample is seeded
    assert task_spy == []
    # The tolerance lines are part of the picture: without them the change plot differs.
    write_plots(second, "review", *arrays, task="regression")
    assert (second / files["change"]).read_bytes() != (first / files["change"]).read_bytes()


def test_regression_degenerate_data_says_not_computable(tmp_path: Path, task_spy: list[str]) -> None:
    y, baseline, _, _ = regression_arrays(300)
    files = write_plots(tmp_path, "m", y, baseline, np.full(300, np.nan), np.ones(300, dtype=bool), task="regression")
    for name in files.values():
        assert_png(tmp_path / name)
    assert task_spy == ["no scored row has a finite actual value", "no row was scored successfully"]
    task_spy.clear()
    write_plots(tmp_path, "m", y, baseline, baseline.copy(), np.zeros(300, dtype=bool), task="regression")
    assert task_spy == []  # nothing changed: one bin around 0, still drawn


def test_scatter_subsample_is_bounded_and_sorted() -> None:
    picks = plots_regression._subsample(1_000_000)
    assert len(picks) == plots_regression.SCATTER_POINTS and np.all(np.diff(picks) > 0)
    assert np.array_equal(plots_regression._subsample(50), np.arange(50))


def test_multiclass_writes_class_flip_and_transition_plots(tmp_path: Path, task_spy: list[str]) -> None:
    y, baseline, mutated, failed = multiclass_arrays(20_000, failures=10)
    files = write_plots(tmp_path, "tier", y, baseline, mutated, failed, task="multiclass", classes=["a", "b", "c"])
    assert files == {"class_flips": "tier-class-flips.png", "transitions": "tier-transitions.png"}
    for name in files.values():
        assert_png(tmp_path / name)
    assert task_spy == []
    nothing = np.ones(len(y), dtype=bool)
    write_plots(tmp_path, "none", y, baseline, mutated, nothing, task="multiclass", classes=["a", "b", "c"])
    assert task_spy == ["no row was scored successfully"] * 2


def test_class_flip_rates_match_a_row_by_row_count() -> None:
    _, baseline, mutated, _ = multiclass_arrays(5_000, k=4)
    base_pred, mut_pred = baseline.argmax(axis=1), mutated.argmax(axis=1)
    rows, rates = plots_multiclass.flip_rates(base_pred, base_pred != mut_pred, 5)  # class 4 is never predicted
    for c in range(4):
        mine = [b != m for b, m in zip(base_pred, mut_pred, strict=True) if b == c]
        assert rows[c] == len(mine) and rates[c] == pytest.approx(sum(mine) / len(mine))
    assert (rows[4], rates[4]) == (0, 0.0)


def test_many_classes_are_grouped_into_other() -> None:
    classes = [f"class-{i:02d}-with-a-long-name" for i in range(15)]
    predicted = np.repeat(np.arange(15), np.arange(15) + 1)  # class i predicted i + 1 times
    mapping, labels = plots_multiclass.group_classes(predicted, classes)
    assert len(labels) == plots_multiclass.MAX_CLASSES and labels[-1] == "other (4)"
    assert list(mapping[:4]) == [11] * 4  # the four least predicted classes are "other"
    assert labels[0] == "class-04-with…" and list(mapping[4:]) == list(range(11))
    few, names = plots_multiclass.group_classes(np.arange(3), ["x", "y", "z"])
    assert list(few) == [0, 1, 2] and names == ["x", "y", "z"]


def test_rejects_input_that_does_not_fit_the_task(tmp_path: Path) -> None:
    y, baseline, mutated, failed = multiclass_arrays(100)
    with pytest.raises(ValueError, match="2 class names for 3 probability columns"):
        write_plots(tmp_path, "m", y, baseline, mutated, failed, task="multiclass", classes=["a", "b"])
    with pytest.raises(ValueError, match=r"multiclass plots need \(n, k\) class probabilities"):
        write_plots(tmp_path, "m", y, baseline[:, 0], mutated[:, 0], failed, task="multiclass")
    with pytest.raises(ValueError, match="regression plots need 1-D scores"):
        write_plots(tmp_path, "m", y, baseline, mutated, failed, task="regression")
    with pytest.raises(ValueError, match="regression plots need numeric actual values"):
        write_plots(tmp_path, "m", y, baseline[:, 0], mutated[:, 0], failed, task="regression")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("task", ["regression", "multiclass"])
def test_million_rows_of_other_tasks_give_small_valid_pngs(tmp_path: Path, task: Task) -> None:
    arrays = regression_arrays(1_000_000, failures=1_000) if task == "regression" else multiclass_arrays(1_000_000)
    files = write_plots(tmp_path, "big", *arrays, task=task, tolerance=0.2 if task == "regression" else None)
    for name in files.values():
        assert_png(tmp_path / name)


@pytest.mark.parametrize("peak", ["left", "right"])
def test_the_shift_legend_sits_above_the_bars_and_the_count_axis_has_ticks(peak: str) -> None:
    """The legend covered the peak and the p95 line (a x100 change moves most rows far: the peak is on the right,
    under the legend); a log count axis within one decade showed one tick."""
    rng = np.random.default_rng(5)
    baseline = rng.uniform(0.01, 0.1, 2_000)
    far = np.clip(baseline + rng.uniform(0.8, 0.9, 2_000), 0, 1)
    mutated = far if peak == "right" else np.where(rng.random(2_000) < 0.1, far, baseline)
    figure = plots._shift_figure("m", baseline, mutated, 0)
    figure.canvas.draw()
    axes = figure.axes[0]
    legend = axes.get_legend().get_window_extent()
    bars = [p.get_window_extent() for p in axes.patches if p.get_height() > 0]
    assert bars and all(legend.y0 > bar.y1 or legend.x1 < bar.x0 or legend.x0 > bar.x1 for bar in bars)
    low, high = axes.get_ylim()
    assert len([t for t in axes.get_yticks() if low <= t <= high]) >= 3
