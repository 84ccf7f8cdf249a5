"""Reading what a model binding names: the artifact, loaded only when the exact bytes read hash to the catalog's
sha256 (joblib files and MLflow's `model.pkl` are pickles, MLflow's xgboost flavour is XGBoost's own format; the
bytes are never read a second time, since the file could change in between), and the labelled evaluation data
with the hash of its bytes.

The experiment reads the evaluation data with `load_eval_sample`, in bounded memory whatever the file's size: the
whole file is hashed by streaming; only the model's columns and the label are read (Parquet `columns=`, CSV
`usecols=`); a first pass reads the label column alone, and when the file holds more rows than the precision needs
(`sampling.py`), a second pass streams record batches (CSV chunks) and keeps only the stratified sample's rows.
Since the file is read more than once, its size and modification time must be the same before and after.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pandas as pd

from tools.evidence.schema import SamplingRecord
from tools.experiment.binding import PICKLE_FORMATS, XGBOOST_FORMAT, BindingError, ModelBinding
from tools.experiment.flavours import load_xgboost
from tools.experiment.sampling import SampleSpec, stratified_indices
from tools.experiment.segments import is_categorical
from tools.experiment.task import TaskDecision, check_labels, label_strata
from tools.settings import load_settings

_HASH_BLOCK = 1 << 20
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|b'[^']*'")
_PARQUET_BATCH_ROWS = 65_536
_CSV_CHUNK_ROWS = 200_000
# Columns the model does not read are read for segments only when they look like a few categories in the file's
# first rows: a bounded number, so column-pruned reads stay cheap on wide files (see `segment_candidates`).
EXTRA_SEGMENT_COLUMNS = 3
_SNIFF_ROWS = 1_000
_SNIFF_MAX_DISTINCT = 20


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_artifact_bytes(path: Path) -> bytes:
    if not path.is_file():
        what = "is a folder without an MLmodel file" if path.is_dir() else "does not exist"
        raise BindingError("missing_artifact", f"model artifact {path} {what}")
    return path.read_bytes()


def load_verified_pipeline(binding: ModelBinding) -> Any:
    """Unpickle the artifact only if its bytes hash to the catalog's sha256."""
    data = read_artifact_bytes(binding.artifact_path)
    actual = sha256_bytes(data)
    if actual != binding.artifact_sha256:
        where = f" ({binding.artifact_uri})" if binding.artifact_uri else ""
        raise BindingError(
            "hash_mismatch",
            f"artifact {binding.artifact_path}{where} has sha256 {actual}, but the binding records "
            f"{binding.artifact_sha256}; it was not loaded. Re-bind the model or restore the artifact",
        )
    return load_pipeline_bytes(
        data, binding.serialization_format, str(binding.artifact_path), any_task=True, model_class=binding.model_class
    )


def load_pipeline_bytes(
    data: bytes,
    serialization_format: str | None,
    where: str,
    *,
    any_task: bool = False,
    model_class: str | None = None,
) -> Any:
    """Load bytes the caller has already verified (or just hashed) and check they are a classifier (with
    `any_task`, a model with predict_proba or predict: task.py decides which task). MLflow's `model.pkl` (pickle or
    cloudpickle) is a plain pickle, its xgboost flavour XGBoost's own format (`model_class` says which class);
    anything else is read as joblib (which also reads plain pickles)."""
    try:
        if serialization_format == XGBOOST_FORMAT:
            pipeline = load_xgboost(data, model_class, where)
        elif is_skops(data, where):
            pipeline = load_skops(data, where)
        elif serialization_format in PICKLE_FORMATS:
            pipeline = pickle.loads(data)
        else:
            pipeline = joblib.load(io.BytesIO(data))
    except BindingError:
        raise
    except Exception as exc:  # any loading failure means the file is not a usable pipeline
        raise BindingError("not_a_pipeline", f"artifact {where} could not be loaded: {scrubbed(exc)}") from exc
    if any_task and not callable(getattr(pipeline, "predict_proba", getattr(pipeline, "predict", None))):
        raise BindingError(
            "not_a_pipeline",
            f"artifact {where} holds a {type(pipeline).__name__}, not a model with predict_proba or predict",
        )
    if not any_task and not callable(getattr(pipeline, "predict_proba", None)):
        raise BindingError(
            "not_a_pipeline",
            f"artifact {where} holds a {type(pipeline).__name__}, not a classifier with predict_proba",
        )
    return pipeline


def is_skops(data: bytes, where: str) -> bool:
    """A skops file: a zip archive (by name `.skops`, or a zip whose first entry is skops' schema.json)."""
    if not data.startswith(b"PK\x03\x04"):
        return False
    return where.lower().endswith(".skops") or b"schema.json" in data[:256]


def load_skops(data: bytes, where: str) -> Any:
    """Load a skops file without unpickling: only skops' default trusted types and PROVENANCE_SKOPS_TRUSTED's."""
    import skops.io as sio

    trusted = [t.strip() for t in (load_settings().provenance_skops_trusted or "").split(",") if t.strip()]
    untrusted = [t for t in sio.get_untrusted_types(data=data) if t not in trusted]
    if untrusted:
        raise BindingError(
            "untrusted_types",
            f"artifact {where} is a skops file holding type(s) skops does not trust by default: "
            f"{', '.join(untrusted)}; nothing was loaded. If you have reviewed them, list them in "
            "PROVENANCE_SKOPS_TRUSTED",
        )
    return sio.loads(data, trusted=trusted or None)


def scrubbed(exc: BaseException) -> str:
    """An error's text without the quoted values it may carry (a cell, a header, a line of a file that was never
    meant to be data): the structure of the message stays, the file's contents do not."""
    text = " ".join(str(exc).split())[:400]
    text = _QUOTED.sub("'…'", text)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def read_table(path: Path) -> tuple[pd.DataFrame, str]:
    """A CSV or Parquet file as a frame, and the sha256 of the bytes it was parsed from."""
    if not path.is_file():
        raise BindingError("missing_eval_data", f"evaluation data {path} does not exist")
    data = path.read_bytes()
    try:
        if is_parquet(path):
            frame = pd.read_parquet(io.BytesIO(data))
        else:
            frame = pd.read_csv(io.BytesIO(data))
    except Exception as exc:  # pandas raises many parser error types
        raise BindingError("bad_eval_data", f"evaluation data {path} could not be read: {scrubbed(exc)}") from exc
    return frame, sha256_bytes(data)


def is_parquet(path: Path) -> bool:
    return path.suffix.lower() in (".parquet", ".pq")


def sha256_file(path: Path) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks (never the whole file at once)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _missing_label(label_column: str, where: Path | str, columns: list[str], *, echo: bool = False) -> BindingError:
    """The header is the file's text: counted, never echoed when the catalog named the file (assess, check); listed
    only for `provenance bind`, whose user named the file on their own command line (`echo`)."""
    if echo:
        return BindingError(
            "bad_eval_data", f"label column {label_column!r} is not in {where}; columns are {', '.join(columns)}"
        )
    return BindingError(
        "bad_eval_data",
        f"label column {label_column!r} is not among the {len(columns)} column(s) of {where}; check "
        "provenance.label_column against the file's header",
    )


def check_label(frame: pd.DataFrame, label_column: str, where: Path | str, *, echo: bool = False) -> None:
    if label_column not in frame.columns:
        raise _missing_label(label_column, where, list(map(str, frame.columns)), echo=echo)
    labels = frame[label_column]
    if labels.isna().any() or not set(np.unique(labels.to_numpy())) <= {0, 1}:
        raise BindingError("bad_eval_data", f"label column {label_column!r} must hold only 0/1 values")


def load_eval_data(binding: ModelBinding) -> tuple[pd.DataFrame, str]:
    """The labelled evaluation frame and the sha256 of its bytes (the baseline cache key)."""
    frame, digest = read_table(binding.eval_data_path)
    check_label(frame, binding.label_column, binding.eval_data_path)
    return frame, digest


@dataclass
class EvalData:
    frame: pd.DataFrame  # the rows the experiment runs on: all of them, or the sample
    sha256: str  # of the whole file's bytes
    sampling: SamplingRecord | None = None  # None: every row is in `frame`


def load_eval_sample(
    binding: ModelBinding,
    columns: list[str] | None,
    spec: SampleSpec,
    task: TaskDecision | None = None,
    extra_columns: int = 0,
) -> EvalData:
    """The evaluation data's `columns` (None: all) plus the label, whole when it has at most `spec.rows` rows (or
    sampling is off), else a sample stratified by label (by label decile for a regression); see the module docstring
    for how memory stays bounded. `task` checks the label (None: a 0/1 label, as `check_label`); `extra_columns`
    adds up to that many other columns that look categorical (`segment_candidates`), for the segment analysis."""
    path, label = binding.eval_data_path, binding.label_column
    if not path.is_file():
        raise BindingError("missing_eval_data", f"evaluation data {path} does not exist")
    before = _stamp(path)
    digest = sha256_file(path)
    try:
        names = _column_names(path)
        if label not in names:
            raise _missing_label(label, path, names)
        wanted = None
        if columns is not None:
            extra = segment_candidates(path, [c for c in names if c != label and c not in set(columns)], extra_columns)
            wanted = [c for c in names if c == label or c in {*columns, *extra}]
        labels = _read_column(path, label)
        if task is None:
            check_label(labels.to_frame(), label, path)
        else:
            check_labels(task, labels, label, path)
        total = len(labels)
        sampling = None
        if not spec.enabled or total <= spec.rows:
            frame = _read_all(path, wanted)
        else:
            strata, strata_names, method = label_strata(labels, task)
            del labels
            chosen = stratified_indices(strata, spec.rows, spec.seed, spec.min_per_class)
            frame = _read_rows(path, wanted, chosen)
            sampling = SamplingRecord(
                method=method,
                rows_total=total,
                rows_used=len(frame),
                class_counts_total=_class_counts(strata, strata_names),
                class_counts_used=_class_counts(strata[chosen], strata_names),
                seed=spec.seed,
                min_per_class=spec.min_per_class,
                confidence=spec.confidence,
                target_flip_half_width=spec.half_width,
                columns_read=list(map(str, frame.columns)),
            )
    except BindingError:
        raise
    except Exception as exc:  # pandas and pyarrow raise many parser error types
        raise BindingError("bad_eval_data", f"evaluation data {path} could not be read: {scrubbed(exc)}") from exc
    if _stamp(path) != before:
        raise BindingError("bad_eval_data", f"evaluation data {path} changed while it was being read; run again")
    return EvalData(frame, digest, sampling)


def segment_candidates(path: Path, names: list[str], limit: int) -> list[str]:
    """Up to `limit` of `names` (in file order) whose first rows hold 2 to 20 distinct text or boolean values: the
    categorical columns of the file worth a segment analysis although the model does not read them. Numeric and
    free-text or id-like columns are left unread."""
    if limit <= 0 or not names:
        return []
    if is_parquet(path):
        import pyarrow.parquet as pq

        with pq.ParquetFile(path) as parquet:
            batch = next(parquet.iter_batches(batch_size=_SNIFF_ROWS, columns=names), None)
        head = pd.DataFrame(columns=names) if batch is None else batch.to_pandas()
    else:
        head = pd.read_csv(path, usecols=names, nrows=_SNIFF_ROWS)
    found = []
    for name in names:
        column = head[name]
        if is_categorical(column.dtype) and 2 <= column.nunique(dropna=True) <= _SNIFF_MAX_DISTINCT:
            found.append(name)
    return found[:limit]


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


def _class_counts(strata: np.ndarray, names: list[str]) -> dict[str, int]:
    values, counts = np.unique(strata, return_counts=True)
    return {names[int(v)]: int(n) for v, n in zip(values, counts, strict=True)}


def _column_names(path: Path) -> list[str]:
    if is_parquet(path):
        import pyarrow.parquet as pq

        schema = pq.read_schema(path)
        index = set(_pandas_index_columns(schema.pandas_metadata))
        return [name for name in schema.names if name not in index]
    return list(map(str, pd.read_csv(path, nrows=0).columns))


def _pandas_index_columns(metadata: dict[str, Any] | None) -> list[str]:
    return [c for c in (metadata or {}).get("index_columns", []) if isinstance(c, str)]


def _read_column(path: Path, column: str) -> pd.Series:
    if is_parquet(path):
        import pyarrow.parquet as pq

        table: pd.DataFrame = pq.read_table(path, columns=[column]).to_pandas()
        return table[column]
    return pd.read_csv(path, usecols=[column])[column]


def _read_all(path: Path, columns: list[str] | None) -> pd.DataFrame:
    if is_parquet(path):
        return pd.read_parquet(path, columns=columns)
    return pd.read_csv(path, usecols=columns)


def _read_rows(path: Path, columns: list[str] | None, chosen: np.ndarray) -> pd.DataFrame:
    """The rows at the sorted positions `chosen`, streamed: one record batch (CSV chunk) in memory at a time."""
    start = 0
    if is_parquet(path):
        import pyarrow as pa
        import pyarrow.parquet as pq

        kept: list[pa.RecordBatch] = []
        with pq.ParquetFile(path) as parquet:
            schema = parquet.schema_arrow
            if columns is not None:
                schema = pa.schema([schema.field(c) for c in columns], metadata=schema.metadata)
            for batch in parquet.iter_batches(batch_size=_PARQUET_BATCH_ROWS, columns=columns):
                stop = start + batch.num_rows
                lo, hi = np.searchsorted(chosen, [start, stop])
                if hi > lo:
                    kept.append(batch.take(pa.array(chosen[lo:hi] - start)))
                start = stop
        frame: pd.DataFrame = pa.Table.from_batches(kept, schema=schema).to_pandas()
        return frame.reset_index(drop=True)
    parts: list[pd.DataFrame] = []
    with pd.read_csv(path, usecols=columns, chunksize=_CSV_CHUNK_ROWS) as reader:
        for chunk in reader:
            stop = start + len(chunk)
            lo, hi = np.searchsorted(chosen, [start, stop])
            if hi > lo:
                parts.append(chunk.iloc[chosen[lo:hi] - start])
            start = stop
    return pd.concat(parts, ignore_index=True)


def expected_columns(pipeline: Any) -> list[str] | None:
    names = getattr(pipeline, "feature_names_in_", None)
    return [str(n) for n in names] if names is not None else None
