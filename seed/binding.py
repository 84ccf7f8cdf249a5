"""The demo models' binding (docs/design.md §4): the custom properties that tell Provenance where a model's artifact
and evaluation data are, checked at seed time."""

from __future__ import annotations

import re
from dataclasses import dataclass

# The keys are the ones Provenance reads (docs/design.md §4), so a seeded binding cannot drift from the reader.
from tools.experiment.binding import ARTIFACT_SHA256, ARTIFACT_URI, EVAL_DATA_URI, LABEL_COLUMN, TASK

_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class ModelBinding:
    """How Provenance finds and checks a model's artifact and evaluation data (docs/design.md §4)."""

    artifact_uri: str
    """Joblib pipeline path, absolute or relative to the catalog file's folder."""
    artifact_sha256: str
    """Lower-case hex digest; the artifact is never unpickled unless it matches."""
    eval_data_uri: str
    """Labelled evaluation data (CSV or Parquet) with columns named like the model's features."""
    label_column: str
    """Label column in the evaluation data (0/1 for a binary classifier, numbers for a regressor)."""
    task: str | None = None
    """Optional `provenance.task` (binary, multiclass, regression); absent, Provenance detects it from the model."""

    def __post_init__(self) -> None:
        # A malformed binding would only surface later as an INCOMPLETE verdict; fail at seed time instead.
        for name in ("artifact_uri", "eval_data_uri", "label_column"):
            if not getattr(self, name):
                raise ValueError(f"ModelBinding.{name} must not be empty")
        if not _SHA256_HEX.fullmatch(self.artifact_sha256):
            raise ValueError(
                f"ModelBinding.artifact_sha256 must be 64 lower-case hex digits (hashlib's hexdigest()), "
                f"got {self.artifact_sha256!r}"
            )

    def to_custom_properties(self) -> dict[str, str]:
        properties = {
            ARTIFACT_URI: self.artifact_uri,
            ARTIFACT_SHA256: self.artifact_sha256,
            EVAL_DATA_URI: self.eval_data_uri,
            LABEL_COLUMN: self.label_column,
        }
        return properties if self.task is None else {**properties, TASK: self.task}
