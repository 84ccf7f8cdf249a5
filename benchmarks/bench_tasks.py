"""Experiment overhead vs raw inference per task: the demo's review-time regressor and a multiclass
classifier on the demo schema, at 100k / 1M rows; plus the metrics alone and the segment analysis alone.

    .venv/bin/python benchmarks/bench_tasks.py [--rows 100000 1000000] [--repeats 3]

(a) experiment = `run_experiment` (baseline + mutate + mutated inference, baseline cache cold; labels and label
                 codes beside the baseline) with the segment groups alongside, then `compute_task_metrics` with
                 segments over the model's inputs and the frame's other columns, and the bands of default-v2, as
                 `tools/experiment/measure.py` calls them
(b) floor      = raw `predict` (regression) / `predict_proba` (multiclass) on the baseline frame + on the mutated
                 frame, the mutation prepared outside the timing.
Timings are the best of `--repeats` runs, floor and experiment interleaved (bench_experiment.py's method).
Target: ratio <= 1.3 at 1M rows. Then `compute_task_metrics` alone per task on 1M synthetic rows (segments off and
on, 20 columns), so the metrics' own cost is visible apart from inference.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_experiment import best_of, eval_frame  # noqa: E402

from policies import load_policy  # noqa: E402
from seed.data import generate_transactions, to_feature_frame  # noqa: E402
from seed.review import REVIEW_FEATURES, build_review_time, review_minutes  # noqa: E402
from tools.experiment.runner import BaselineCache, run_experiment  # noqa: E402
from tools.experiment.task import TaskDecision, decide_task  # noqa: E402
from tools.experiment.task_metrics import MetricInputs, compute_task_metrics, prepare_metric_inputs  # noqa: E402
from tools.mutations import apply_mutation, parse_mutation  # noqa: E402
from tools.runtime.overlap import alongside  # noqa: E402

POLICY = load_policy().policy
TIER_LABEL = "tier"
TIER_FEATURES = ["txn_amount", "merchant_category", "txn_count_1h"]
TRAIN_SEED = 11


def with_labels(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The review time (the demo regressor's label) and a 3-class customer tier drawn from amount and burst count."""
    out = frame.copy()
    out["review_minutes"] = review_minutes(frame, seed)
    rng = np.random.default_rng(seed + 1)
    score = (
        np.log1p(frame["txn_amount"].to_numpy())
        + 0.3 * frame["txn_count_1h"].to_numpy()
        + rng.normal(0, 0.6, len(frame))
    )
    out[TIER_LABEL] = np.array(["basic", "plus", "premium"])[np.digitize(score, np.quantile(score, [0.4, 0.8]))]
    return out


def train_models() -> dict[str, tuple[Any, list[str], str]]:
    train = with_labels(to_feature_frame(generate_transactions(n_rows=20_000, seed=TRAIN_SEED)), TRAIN_SEED)
    regressor = build_review_time(TRAIN_SEED).fit(train[REVIEW_FEATURES], train["review_minutes"])
    encode = ColumnTransformer(
        [
            ("num", StandardScaler(), ["txn_amount", "txn_count_1h"]),
            ("cat", OneHotEncoder(handle_unknown="ignore"), ["merchant_category"]),
        ]
    )
    classifier = Pipeline([("encode", encode), ("model", LogisticRegression(max_iter=300))])
    classifier.fit(train[TIER_FEATURES], train[TIER_LABEL])
    return {
        "regression": (regressor, REVIEW_FEATURES, "review_minutes"),
        "multiclass": (classifier, TIER_FEATURES, TIER_LABEL),
    }


def measure(
    task_name: str, model: Any, features: list[str], label: str, frame: pd.DataFrame, repeats: int
) -> dict[str, Any]:
    mutation = parse_mutation("scale", {"factor": 100})
    decision: TaskDecision = decide_task(model)
    assert decision.task == task_name, decision
    mutated_frame = frame.assign(txn_amount=apply_mutation(frame["txn_amount"], mutation))
    infer = model.predict if task_name == "regression" else model.predict_proba
    segment_columns = [*features, *[c for c in frame.columns if c not in features and c not in (label, "is_fraud")]]
    steps: dict[str, float] = {}

    def floor() -> None:
        infer(frame[features])
        infer(mutated_frame[features])

    def experiment() -> None:
        segments_frame = frame[segment_columns]
        outcome, groups = alongside(
            lambda: run_experiment(
                pipeline=model, frame=frame, columns=features, label_column=label, feature_column="txn_amount",
                mutation=mutation, cache=BaselineCache(), cache_key=("bench", task_name), task=decision,
            ),
            lambda: prepare_metric_inputs(None, segments_frame, POLICY.segments).groups,
        )  # fmt: skip
        started = time.perf_counter()
        compute_task_metrics(
            decision.task, outcome.y_true, outcome.baseline, outcome.mutated.scores, outcome.mutated.failed,
            classes=decision.class_list, segments_frame=segments_frame,
            segment_bands=POLICY.segment_bands(decision.task), segment_rule=POLICY.segments,
            tolerance_fraction=POLICY.regression_tolerance_fraction() or 0.1,
            prepared=MetricInputs(labels=outcome.label_codes, groups=groups),
        )  # fmt: skip
        for step, seconds in [*outcome.seconds.items(), ("metrics", time.perf_counter() - started)]:
            steps[step] = min(steps.get(step, float("inf")), seconds)

    floor_s, experiment_s = best_of(repeats, floor, experiment)
    return {"task": task_name, "rows": len(frame), "experiment_s": experiment_s, "floor_s": floor_s, "steps": steps}


def synthetic(
    task: str, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str] | None]:
    if task == "binary":
        y = (rng.random(n) < 0.3).astype(int)
        base = np.clip(0.2 + 0.5 * y + rng.normal(0, 0.15, n), 0, 1)
        return y, base, np.clip(base + rng.normal(0, 0.05, n), 0, 1), None
    if task == "multiclass":
        classes = ["a", "b", "c", "d", "e"]
        logits = rng.normal(0, 1, (n, 5))
        y = np.array(classes)[(logits + rng.normal(0, 1, (n, 5))).argmax(1)]
        probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
        noisy = np.exp(logits + rng.normal(0, 0.3, (n, 5)))
        return y, probs, noisy / noisy.sum(1, keepdims=True), classes
    y = rng.normal(100, 30, n)
    base = y + rng.normal(0, 10, n)
    return y, base, base + rng.normal(0, 2, n), None


def segment_frame(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """20 columns: 10 categorical (3-40 values, one identifier-like of 1000) and 10 numeric."""
    cols: dict[str, Any] = {f"cat{i}": rng.choice([f"v{j}" for j in range(3 + 4 * i)], n) for i in range(9)}
    cols["ident"] = rng.choice([f"id{j}" for j in range(1000)], n)
    cols |= {f"num{i}": rng.gamma(2.0, 10.0 * (i + 1), n) for i in range(10)}
    return pd.DataFrame(cols)


def time_once(fn: Callable[[], object], repeats: int) -> float:
    return min(best_of(repeats, fn))


def metrics_alone(n: int, repeats: int) -> None:
    rng = np.random.default_rng(0)
    frame = segment_frame(n, rng)
    print(f"\ncompute_task_metrics alone on {n:,} synthetic rows (best of {repeats}, seconds)\n")
    print(f"{'task':>10} | {'no segments':>11} | {'20 segment columns':>18} | segments tested")
    for task in ("binary", "multiclass", "regression"):
        y, base, mut, classes = synthetic(task, n, rng)
        failed = np.zeros(n, dtype=bool)
        plain = time_once(lambda: compute_task_metrics(task, y, base, mut, failed, classes=classes), repeats)  # noqa: B023
        result: list[Any] = []

        def segmented() -> None:
            result.append(compute_task_metrics(task, y, base, mut, failed, classes=classes, segments_frame=frame))  # noqa: B023

        seg = time_once(segmented, repeats)
        tested = result[-1].segments.segments_tested
        print(f"{task:>10} | {plain:>11.3f} | {seg:>18.3f} | {tested}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    models = train_models()
    print(f"scale(txn_amount, factor=100) on all rows; best of {args.repeats}\n")
    header = f"{'task':>10} | {'rows':>9} | {'experiment s':>12} | {'floor s':>8} | {'ratio':>5} | "
    header += "baseline | mutate | mutated | metrics"
    print(header)
    print("-" * len(header))
    for rows in args.rows:
        frame = with_labels(eval_frame(rows), 7)
        for task, (model, features, label) in models.items():
            r = measure(task, model, features, label, frame, args.repeats)
            s = r["steps"]
            print(
                f"{task:>10} | {rows:>9,} | {r['experiment_s']:>12.3f} | {r['floor_s']:>8.3f} | "
                f"{r['experiment_s'] / r['floor_s']:>5.2f} | {s['baseline']:>8.3f} | {s['mutate']:>6.3f} | "
                f"{s['mutated']:>7.3f} | {s['metrics']:>7.3f}"
            )
    metrics_alone(max(args.rows), args.repeats)


if __name__ == "__main__":
    main()
