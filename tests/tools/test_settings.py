"""Environment settings (tools/settings.py): a value Provenance cannot use is an error naming the variable and the
rule, never a pydantic traceback."""

from __future__ import annotations

import pytest

from agent.cli import main
from tools.settings import SettingsError, load_settings


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("PROVENANCE_WORKERS", "-3"),
        ("PROVENANCE_SAMPLE_HALF_WIDTH", "abc"),
        ("PROVENANCE_EXECUTOR", "gpu"),
        ("PROVENANCE_CATALOG", "cloud"),
        ("PROVENANCE_CATALOG_BULK_CALLS", "0"),
    ],
)
def test_a_bad_value_names_the_variable(
    name: str, value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match=f"{name}='{value}'"):
        load_settings()
    assert main(["runs"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {name}='{value}'") and "Traceback" not in err, err


def test_a_seed_beyond_64_bits_is_refused_before_anything_runs(capsys: pytest.CaptureFixture[str]) -> None:
    urn = "urn:li:dataset:(urn:li:dataPlatform:postgres,payments.public.transactions,PROD)"
    args = ["assess", "--dataset", urn, "--field", "amount", "--op", "scale", "--param", "factor=100"]
    assert main([*args, "--seed", str(2**64), "--no-publish"]) == 2
    err = capsys.readouterr().err
    assert "--seed must be in [0, 2**63)" in err and "Traceback" not in err, err
