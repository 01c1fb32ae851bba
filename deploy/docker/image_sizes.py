"""Estimate the images' sizes from what their layers hold, where no container engine can build them.

    python deploy/docker/image_sizes.py          (from the repository root, after `make setup`)

Each image is its base image plus the layers its Dockerfile adds; this measures those layers'
contents on this machine, installed exactly as the Dockerfiles install them:
- the virtual environment: `uv sync --frozen --no-dev --no-editable --package ...` with the
  Dockerfile's packages, bytecode compiled (UV_COMPILE_BYTECODE=1), into a temporary folder;
- simulusion-platform: the web app's build (web/dist; `python scripts/build_web.py` makes it);
- simulusion-platform-envs: the Debian packages of Mesa's EGL/OSMesa with the dependencies a
  Debian slim image lacks (installed sizes from dpkg, so they must be installed here:
  scripts/install_system_deps.sh), and the catalog's Menagerie robots (under MENAGERIE_ROOT).
The base image's size is its published uncompressed size (BASE_IMAGE_MB), not measured here.
Sizes are uncompressed, as `docker images` shows them; a registry stores them compressed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MB = 1_000_000
BASE_IMAGE = "python:3.11-slim-bookworm"
BASE_IMAGE_MB = 130  # uncompressed on linux/amd64 (about 45 MB compressed), as Docker Hub lists it
CONTROL_PLANE_PACKAGES = ("platform-gateway", "platform-broker", "platform-recorder", "platform-machines",
                          "platform-evals")
ENVIRONMENT_PACKAGES = ("platform-envhost",)
MESA_PACKAGES = ("libegl1", "libegl-mesa0", "libgl1", "libosmesa6", "libgl1-mesa-dri")
# Installed in python:3.11-slim-bookworm already (Debian's required packages are too: see
# `_in_base_image`), so Mesa's dependencies on them add nothing.
PYTHON_SLIM_PACKAGES = frozenset({
    "ca-certificates", "netbase", "tzdata", "libssl3", "libsqlite3-0", "libffi8", "libreadline8",
    "libncursesw6", "libtinfo6", "libexpat1", "libbz2-1.0", "liblzma5", "libuuid1", "libdb5.3",
    "libgdbm6", "libnsl2", "libtirpc3", "libtirpc-common", "libgssapi-krb5-2", "libkrb5-3",
    "libk5crypto3", "libkrb5support0", "libkeyutils1", "libcom-err2", "readline-common",
})


@dataclass(frozen=True)
class Layer:
    what: str
    bytes: int


def tree_bytes(path: Path) -> int:
    """The size of every file under `path` (each hard link once), as a layer stores them."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            stat = os.lstat(os.path.join(folder, name))
            if (stat.st_dev, stat.st_ino) not in seen:
                seen.add((stat.st_dev, stat.st_ino))
                total += stat.st_size
    return total


def venv_bytes(packages: tuple[str, ...]) -> int:
    """The size of the venv the Dockerfile's `uv sync` makes for `packages`."""
    with tempfile.TemporaryDirectory(prefix="image-venv-") as scratch:
        venv = Path(scratch) / "venv"
        command = ["uv", "sync", "--frozen", "--no-dev", "--no-editable", "--quiet"]
        for package in packages:
            command += ["--package", package]
        env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(venv), "UV_COMPILE_BYTECODE": "1",
               "UV_LINK_MODE": "copy"}
        subprocess.run(command, cwd=ROOT, env=env, check=True)
        return tree_bytes(venv)


def _in_base_image(package: str) -> bool:
    if package in PYTHON_SLIM_PACKAGES:
        return True
    priority = subprocess.run(["dpkg-query", "-W", "-f", "${Priority}", package], capture_output=True, text=True)
    return priority.stdout.strip() == "required"


def debian_packages_bytes(packages: tuple[str, ...]) -> int:
    """Installed size of `packages` and the dependencies they pull that the base image lacks."""
    listed = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
         "--no-breaks", "--no-replaces", "--no-enhances", "--no-pre-depends", *packages],
        capture_output=True, text=True, check=True).stdout
    names = {line.strip() for line in listed.splitlines() if line and not line.startswith(" ") and "<" not in line}
    total = 0
    for name in sorted(names):
        if _in_base_image(name):
            continue
        size = subprocess.run(["dpkg-query", "-W", "-f", "${Installed-Size}", name], capture_output=True, text=True)
        if size.returncode != 0 or not size.stdout.strip():
            continue  # a virtual package, or an alternative not installed here
        total += int(size.stdout) * 1024
    return total


def menagerie_bytes() -> int:
    from platform_envs.robots.menagerie import CATALOG_ROBOTS

    root = os.environ.get("MENAGERIE_ROOT")
    if not root:
        raise SystemExit("image_sizes: set MENAGERIE_ROOT to a Menagerie copy holding the catalog's robots")
    return sum(tree_bytes(Path(root) / robot) for robot in CATALOG_ROBOTS)


def web_build_bytes() -> int:
    dist = ROOT / "web" / "dist"
    if not (dist / "index.html").is_file():
        raise SystemExit("image_sizes: web/dist is missing: python scripts/build_web.py --require")
    return tree_bytes(dist)


def report(image: str, layers: list[Layer]) -> int:
    total = BASE_IMAGE_MB * MB + sum(layer.bytes for layer in layers)
    print(f"{image}: about {total / MB:,.0f} MB")
    print(f"  {BASE_IMAGE_MB:>7,} MB  {BASE_IMAGE} (published size)")
    for layer in layers:
        print(f"  {layer.bytes / MB:>7,.0f} MB  {layer.what}")
    return total


def main() -> int:
    report("simulusion-platform", [
        Layer(f"venv: {' '.join(CONTROL_PLANE_PACKAGES)}", venv_bytes(CONTROL_PLANE_PACKAGES)),
        Layer("web app build (web/dist)", web_build_bytes()),
    ])
    report("simulusion-platform-envs", [
        Layer(f"Debian packages: {' '.join(MESA_PACKAGES)} and their dependencies",
              debian_packages_bytes(MESA_PACKAGES)),
        Layer(f"venv: {' '.join(ENVIRONMENT_PACKAGES)} (platform-sdk[server], platform-envs[all])",
              venv_bytes(ENVIRONMENT_PACKAGES)),
        Layer("Menagerie robots of the catalog (/opt/menagerie)", menagerie_bytes()),
    ])
    return 0


if __name__ == "__main__":
    sys.exit(main())
