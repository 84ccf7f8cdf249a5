"""Catalog conventions: production markers, mirror platforms, identity transforms (`conventions.yaml`)."""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tools.errors import BadRequest

DEFAULT_CONVENTIONS_PATH = Path(__file__).with_name("conventions.yaml")
CONVENTIONS_ENV = "PROVENANCE_CONVENTIONS"


class ConventionsError(BadRequest, ValueError):
    """A conventions file that cannot be used; the message names the file and the problem."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ProductionMarkers(_Frozen):
    global_tags: tuple[str, ...] = ()
    platform_tags: tuple[str, ...] = ()
    model_property_tags: tuple[str, ...] = ()
    stage_properties: tuple[str, ...] = ()
    stage_values: tuple[str, ...] = ()
    alias_properties: tuple[str, ...] = ()
    alias_values: tuple[str, ...] = ()


class Conventions(_Frozen):
    production: ProductionMarkers
    mirror_platforms: tuple[str, ...] = ()
    identity_transforms: tuple[str, ...] = Field(default=("IDENTITY", "COPY"))
    copy_edge_platforms: tuple[str, ...] = ()
    """Platforms whose column edges that record no transform the user declares to be copies (e.g. a feature
    store's feature views): carried as is, and said so in the path as the user's assumption, never Provenance's."""
    sha256: str = ""
    path: str = ""

    def is_identity(self, transform: str | None) -> bool:
        """'COPY: "t"."c" AS "c"' counts by its head; a missing, empty, unreadable or computed transform does not."""
        if not transform or not transform.strip():
            return False
        head = transform.split(":", 1)[0].strip().upper()
        return head in {t.upper() for t in self.identity_transforms if t.strip()}

    def declares_copy(self, platform: str | None) -> bool:
        return platform is not None and platform.lower() in {p.lower() for p in self.copy_edge_platforms}

    def is_mirror(self, platform: str | None) -> bool:
        return platform is not None and platform.lower() in {p.lower() for p in self.mirror_platforms}


def load_conventions(path: Path | None = None) -> Conventions:
    target = path or Path(os.environ.get(CONVENTIONS_ENV) or DEFAULT_CONVENTIONS_PATH)
    return _load(target.expanduser().resolve())


@lru_cache(maxsize=8)
def _load(target: Path) -> Conventions:
    try:
        raw = target.read_bytes()
    except OSError as exc:
        raise ConventionsError(
            f"{target}: cannot read the conventions file ({exc.strerror or exc}); "
            f"fix {CONVENTIONS_ENV} or unset it to use the packaged defaults"
        ) from exc
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ConventionsError(f"{target}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConventionsError(f"{target}: expected a mapping (production, mirror_platforms, identity_transforms)")
    try:
        return Conventions.model_validate({**data, "sha256": hashlib.sha256(raw).hexdigest(), "path": str(target)})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConventionsError(f"{target}: invalid conventions: {where}: {first['msg']}") from None
