"""The PR gate on a dbt project written as dbt Labs' guide writes one: macros and ephemeral models are rendered as
dbt compiles them, so a change inside a macro or an ephemeral model reaches the models that use it, and a model
whose Jinja only dbt can render is reviewed by hand when such a change may hide in it — never "no change"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.changes.repo import GitRepo
from tools.changes.dbt_render import DbtProject, Renderer, RenderError
from tools.changes.infer import ModelChanges, analyse

PROJECT = """name: shop
version: '1.0'
profile: shop
models:
  shop:
    staging:
      +materialized: view
    intermediate:
      +materialized: ephemeral
    marts:
      +materialized: table
"""
MACRO = """{% macro cents_to_dollars(column_name, scale=2) -%}
    ({{ column_name }} / 100)::numeric(16, {{ scale }})
{%- endmacro %}
"""
STAGING = """with source as (
    select * from {{ source('shop', 'raw_orders') }}
),
renamed as (
    select
        id as order_id,
        customer as customer_id,
        {{ cents_to_dollars('subtotal') }} as subtotal,
        {{ cents_to_dollars('tax_paid') }} as tax_paid
    from source
)
select * from renamed
"""
INTERMEDIATE = """select order_id, customer_id, subtotal + tax_paid as order_total from {{ ref('stg_orders') }}
"""
MART = """with orders as (
    select * from {{ ref('int_order_totals') }}
),
final as (
    select order_id, customer_id, order_total, order_total * 1 as total_copy from orders
)
select * from final
"""


def _repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.create(tmp_path / "repo")
    repo.commit(
        "base",
        {
            "dbt_project.yml": PROJECT,
            "macros/cents_to_dollars.sql": MACRO,
            "models/staging/stg_orders.sql": STAGING,
            "models/intermediate/int_order_totals.sql": INTERMEDIATE,
            "models/marts/order_facts.sql": MART,
        },
    )
    return repo


def _by_file(models: list[ModelChanges]) -> dict[str, ModelChanges]:
    return {m.file: m for m in models}


def test_a_macro_edit_reaches_every_model_that_calls_it(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    repo.commit("macro", {"macros/cents_to_dollars.sql": MACRO.replace("/ 100", "/ 1000")})
    found = _by_file(analyse(repo.root, "HEAD~1", "HEAD"))
    staging = found["models/staging/stg_orders.sql"]
    assert "the macro file macros/cents_to_dollars.sql changed" in staging.note
    # ::numeric(16, 2) rounds: x / 1000 rounded is not a tenth of x / 100 rounded, so no operator is claimed
    assert {f.column: f.kind for f in staging.findings} == {"subtotal": "unmapped", "tax_paid": "unmapped"}
    assert all("/ 1000" in (f.reason or "") for f in staging.findings)
    assert "macros/cents_to_dollars.sql" not in found  # a macro builds no table: it is read through its callers

    uncast = MACRO.replace("::numeric(16, {{ scale }})", "")
    repo.commit("uncast", {"macros/cents_to_dollars.sql": uncast})
    repo.commit("tenth", {"macros/cents_to_dollars.sql": uncast.replace("/ 100", "/ 1000")})
    staging = _by_file(analyse(repo.root, "HEAD~1", "HEAD"))["models/staging/stg_orders.sql"]
    scaled = {f.column: f.mapping for f in staging.findings}
    assert set(scaled) == {"subtotal", "tax_paid"}
    assert all(m is not None and m.op == "scale" and m.params["factor"] == pytest.approx(0.1) for m in scaled.values())


def test_an_ephemeral_model_change_reaches_the_mart_that_refs_it(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    x100 = INTERMEDIATE.replace("subtotal + tax_paid", "(subtotal + tax_paid) * 100")
    repo.commit("eph", {"models/intermediate/int_order_totals.sql": x100})
    found = _by_file(analyse(repo.root, "HEAD~1", "HEAD"))
    assert "models/intermediate/int_order_totals.sql" not in found  # ephemeral: no table of its own
    mart = found["models/marts/order_facts.sql"]
    assert "the ephemeral model" in mart.note and mart.error is None
    mappings = {f.column: f.mapping for f in mart.findings}
    assert set(mappings) == {"order_total", "total_copy"}
    assert all(m is not None and (m.op, m.params) == ("scale", {"factor": 100.0}) for m in mappings.values())


def test_a_model_only_dbt_can_render_is_reviewed_by_hand_when_a_macro_changed(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    needs_dbt = "select {{ dbt_utils.generate_surrogate_key(['order_id']) }} as k, * from {{ ref('stg_orders') }}\n"
    repo.commit("pkg", {"models/marts/keys.sql": needs_dbt})
    repo.commit("macro", {"macros/cents_to_dollars.sql": MACRO.replace("100", "1000")})
    keys = _by_file(analyse(repo.root, "HEAD~1", "HEAD"))["models/marts/keys.sql"]
    assert keys.error is not None and "only dbt can render" in keys.error and "macro" in keys.error


def test_the_sandbox_refuses_python_internals_and_the_host_environment() -> None:
    project = DbtProject.read("", PROJECT, {})
    renderer = Renderer(project)
    with pytest.raises(RenderError):
        renderer.render("m.sql", "select {{ ''.__class__.__mro__[1].__subclasses__() }}")
    with pytest.raises(RenderError, match="never read"):
        renderer.render("m.sql", "select '{{ env_var('HOME') }}'")
    assert "'x'" in renderer.render("m.sql", "select '{{ env_var('HOME', 'x') }}'").sql
