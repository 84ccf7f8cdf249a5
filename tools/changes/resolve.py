"""Which catalog dataset a SQL model builds: searched by the model's table name (optionally on one platform and
under a name prefix such as `payments.public`), or named explicitly (`--dataset NAME=URN`).

An ambiguous or unknown name is never guessed: the Resolution carries no URN and a reason that says which option
fixes it. The resolver is a plain async callable, so the SQL mapping can be tested without any catalog.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from tools.catalog.conventions import Conventions, load_conventions
from tools.catalog.datahub import CatalogReader
from tools.catalog.siblings import without_dbt_twins
from tools.catalog.training_runs import dataset_parts
from tools.errors import BadRequest

SEARCH_RESULTS = 50
EXAMPLE_URN = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"
FIX_HINT = "pass --platform P, --name-prefix DB.SCHEMA, or --dataset NAME=URN"


class MappingOptionError(BadRequest, ValueError):
    """A `--dataset NAME=URN` option is malformed (exit 2)."""


@dataclass(frozen=True)
class Resolution:
    urn: str | None
    fields: tuple[str, ...] | None = None
    """The dataset's field paths as the catalog lists them; None when not read."""
    reason: str = ""
    """Why there is no URN, and how to fix it."""


Resolver = Callable[[str, str], Awaitable[Resolution]]
"""(the model's table name, its file) -> the dataset it builds."""


def parse_explicit(pairs: list[str]) -> dict[str, str]:
    """`--dataset NAME=URN` options: NAME is a table name (as the model names it) or the model's file path."""
    explicit: dict[str, str] = {}
    for pair in pairs:
        name, sep, urn = pair.partition("=")
        if not sep or not name.strip() or not urn.strip().startswith("urn:li:dataset:"):
            raise MappingOptionError(
                f"--dataset expects NAME=URN with a dataset URN, got {pair!r} (e.g. --dataset "
                f"transactions={EXAMPLE_URN})"
            )
        explicit[name.strip().lower()] = urn.strip()
    return explicit


@dataclass
class CatalogResolver:
    """Resolves model names through the catalog's search; caches per table name."""

    reader: CatalogReader
    platform: str | None = None
    name_prefix: str | None = None
    explicit: dict[str, str] = field(default_factory=dict)
    conventions: Conventions = field(default_factory=load_conventions)
    _cache: dict[str, Resolution] = field(default_factory=dict)

    async def __call__(self, table: str, file: str) -> Resolution:
        key = table.lower()
        if key not in self._cache:
            self._cache[key] = await self._resolve(table, file)
        return self._cache[key]

    def _explicit_urn(self, table: str, file: str) -> str | None:
        for name in (file.lower(), table.lower(), table.lower().rsplit(".", 1)[-1]):
            if name in self.explicit:
                return self.explicit[name]
        return None

    async def _with_fields(self, urn: str) -> Resolution:
        return Resolution(urn, tuple(f.field_path for f in await self.reader.list_schema_fields(urn)))

    async def _resolve(self, table: str, file: str) -> Resolution:
        explicit = self._explicit_urn(table, file)
        if explicit is not None:
            if await self.reader.get_entity(explicit) is None:
                return Resolution(None, reason=f"--dataset names {explicit}, which is not in the catalog")
            return await self._with_fields(explicit)
        wanted = table.lower()
        only = "entity_type = dataset" + (f" AND platform = {self.platform}" if self.platform else "")
        hits = await self.reader.search(wanted.rsplit(".", 1)[-1], filter=only, num_results=SEARCH_RESULTS)
        candidates = [hit.urn for hit in hits if self._matches(hit.urn, wanted)]
        originals = [u for u in candidates if not self.conventions.is_mirror(dataset_parts(u)[0])]
        candidates = sorted(set(without_dbt_twins(originals or candidates)))
        if len(candidates) == 1:
            return await self._with_fields(candidates[0])
        where = (f" on platform {self.platform}" if self.platform else "") + (
            f" under {self.name_prefix}" if self.name_prefix else ""
        )
        if not candidates:
            return Resolution(None, reason=f"no dataset named {table!r} in the catalog{where}; {FIX_HINT}")
        listed = ", ".join(candidates[:5]) + (f" (+{len(candidates) - 5} more)" if len(candidates) > 5 else "")
        return Resolution(None, reason=f"{table!r} matches several datasets{where}: {listed}; {FIX_HINT}")

    def _matches(self, urn: str, wanted: str) -> bool:
        platform, name, _ = dataset_parts(urn)
        name = name.lower()
        if self.platform and (platform or "").lower() != self.platform.lower():
            return False
        if self.name_prefix and not name.startswith(self.name_prefix.lower().rstrip(".") + "."):
            return False
        return name == wanted or name.endswith("." + wanted)
