"""Sampled vs full assessment of a large Parquet evaluation file: time, peak RSS, flip-rate and AUC interval widths.

    .venv/bin/python benchmarks/bench_sampling.py [--rows 10000000] [--full-rows 2000000] [--full-big]

Generates (once, cached in $TMPDIR/provenance-bench-sampling) Parquet files of the demo features (seed 7, written
one 1M-row chunk at a time, row groups of 500k rows, plus an unused text column), trains the demo models, then runs
each variant — `prepare_model` + `measure_prepared` for `scale(txn_amount, factor=100)` on `fraud_detector` — in a fresh
subprocess and reports its wall time and peak RSS (`resource.getrusage(RUSAGE_SELF).ru_maxrss`, which includes the
interpreter and imported libraries, ~150-200 MB). Full 10M rows only with --full-big (several GB and minutes);
by default the full run is on --full-rows for contrast.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHUNK_ROWS = 1_000_000
DATA_SEED = 7


def parquet_file(folder: Path, rows: int) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from seed.data import generate_transactions, to_feature_frame

    path = folder / f"eval-{rows}.parquet"
    if path.is_file():
        return path
    partial = path.with_suffix(".partial")
    writer: pq.ParquetWriter | None = None
    try:
        for i, start in enumerate(range(0, rows, CHUNK_ROWS)):
            frame = to_feature_frame(generate_transactions(n_rows=min(CHUNK_ROWS, rows - start), seed=DATA_SEED + i))
            frame["note"] = "not read by any model"
            table = pa.Table.from_pandas(frame, preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(partial, table.schema)
            writer.write_table(table, row_group_size=500_000)
    finally:
        if writer is not None:
            writer.close()
    partial.replace(path)
    return path


def child(args: argparse.Namespace) -> None:
    """One variant, in its own process so that ru_maxrss is this variant's peak."""
    from seed.data import LABEL_COLUMN
    from seed.model import FRAUD_DETECTOR
    from tools.catalog.discovery import AffectedFeature, AffectedModel
    from tools.experiment.binding import ARTIFACT_SHA256, ARTIFACT_URI, EVAL_DATA_URI
    from tools.experiment.binding import LABEL_COLUMN as LABEL_KEY
    from tools.experiment.measure import measure_prepared
    from tools.experiment.prepare import PreparedModel, prepare_model
    from tools.experiment.runner import BaselineCache
    from tools.experiment.sampling import SampleSpec
    from tools.mutations import parse_mutation

    artifact = Path(args.artifact)
    link = AffectedFeature(
        urn="urn:li:mlFeature:(f,txn_amount)", name="txn_amount", dataset_urn="urn:li:dataset:x",
        column="txn_amount", path=[], precision="column",
    )  # fmt: skip
    model = AffectedModel(
        urn="urn:li:mlModel:(fraud)", name=FRAUD_DETECTOR, production=True, production_evidence="bench",
        features=[link], owners=[], tags=[], related_documents=[],
        custom_properties={
            ARTIFACT_URI: str(artifact), ARTIFACT_SHA256: hashlib.sha256(artifact.read_bytes()).hexdigest(),
            EVAL_DATA_URI: args.path, LABEL_KEY: LABEL_COLUMN,
        },
    )  # fmt: skip
    mutation = parse_mutation("scale", {"factor": 100})
    started = time.perf_counter()
    prepared = prepare_model(model, mutation, artifact.parent, sampling=SampleSpec(half_width=args.half_width))
    assert isinstance(prepared, PreparedModel), prepared
    read = time.perf_counter() - started
    evidence = measure_prepared(prepared, mutation, BaselineCache()).evidence
    seconds = time.perf_counter() - started
    m = evidence.metrics
    assert m is not None and m.flip_rate_ci_low is not None and m.flip_rate_ci_high is not None
    auc = m.binary.auc if m.binary is not None else None
    auc_width = None if auc is None else auc.ci_high - auc.ci_low
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({
        "rows_used": m.n, "seconds": seconds, "read_seconds": read, "peak_mb": kb / 1024,
        "flip_rate": m.flip_rate, "flip_half_width": (m.flip_rate_ci_high - m.flip_rate_ci_low) / 2,
        "auc_delta": None if auc is None else auc.delta, "auc_ci_width": auc_width,
    }))  # fmt: skip


def run_variant(label: str, path: Path, artifact: Path, half_width: float) -> dict[str, object]:
    command = [sys.executable, __file__, "--child", "--path", str(path), "--artifact", str(artifact)]
    command += ["--half-width", str(half_width)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        return {"variant": label, "error": done.stderr.strip().splitlines()[-1:]}
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return {"variant": label, **result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--full-rows", type=int, default=2_000_000)
    parser.add_argument("--full-big", action="store_true", help="also run the full experiment on --rows")
    parser.add_argument("--half-width", type=float, default=0.005)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "provenance-bench-sampling")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--artifact", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    sys.path.insert(0, str(ROOT))
    from seed.model import FRAUD_DETECTOR, train_demo_models

    args.cache.mkdir(parents=True, exist_ok=True)
    artifact = train_demo_models(args.cache / "models").models[FRAUD_DETECTOR].artifact_path
    started = time.perf_counter()
    big = parquet_file(args.cache, args.rows)
    small = parquet_file(args.cache, args.full_rows)
    print(
        f"data: {big} ({big.stat().st_size / 2**20:,.0f} MiB), {small}; ready in {time.perf_counter() - started:.1f} s"
    )
    variants = [
        (f"sampled {args.rows:,}", big, args.half_width),
        (f"sampled {args.full_rows:,}", small, args.half_width),
        (f"full {args.full_rows:,}", small, 0.0),
    ]
    if args.full_big:
        variants.append((f"full {args.rows:,}", big, 0.0))
    header = f"{'variant':>20} | {'rows used':>10} | {'time s':>7} | {'read s':>6} | {'peak RSS MB':>11} | "
    header += f"{'flip rate':>9} | {'flip CI ±':>9} | {'ΔAUC':>8} | {'ΔAUC CI width':>13}"
    print(header)
    for label, path, half_width in variants:
        r = run_variant(label, path, artifact, half_width)
        if "error" in r:
            print(f"{label:>20} | failed: {r['error']}")
            continue
        print(
            f"{label:>20} | {r['rows_used']:>10,} | {r['seconds']:>7.2f} | {r['read_seconds']:>6.2f} | "
            f"{r['peak_mb']:>11,.0f} | {r['flip_rate']:>9.4%} | {r['flip_half_width']:>9.4%} | "
            f"{r['auc_delta']:>+8.4f} | {r['auc_ci_width']:>13.4f}"
        )
    if not args.full_big:
        print(f"full {args.rows:,}: skipped (pass --full-big; the whole frame and two score passes need several GB)")


if __name__ == "__main__":
    main()
