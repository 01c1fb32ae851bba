"""The client wheel the gateway serves (`GET /v0/wheels/platform-sdk`), built from the running
installation so that it always matches the platform.

It is a PEP 427 wheel, `platform_sdk-<version>-py3-none-any.whl`, written with the standard
library's `zipfile` and `hashlib` (a wheel is a zip with three small text files in its
`.dist-info`; a build backend would need the source tree, which an installed gateway has not):

- the packages `platform_sdk`, `platform_contracts` and `simulusion` (the generated protobuf
  code), every file of each as installed (found by `importlib.util.find_spec`), without
  `__pycache__` or compiled files, and without the SDK's environment-server side
  (`SERVER_SIDE`: the server, `platform-check`, the launcher): the wheel is the client and the
  agents, never an environment host;
- `METADATA`: the installed `platform-sdk` distribution's name, version, summary, Python
  requirement, extras and requirements, less `platform-contracts` (its code is in the wheel) and
  less the `server` extra (its code is not). So the base needs only what the client needs
  (numpy, gymnasium, httpx, protobuf). protobuf's requirement also gets the
  generated code's version as its floor (a runtime older than the code that protoc generated
  refuses to load it);
- `WHEEL`, `entry_points.txt` (the distribution's console scripts whose code is in the wheel:
  `platform-agent`, `platform-compare`) and `RECORD` (every file's sha256 and size).

The bytes are the same on every build of one installation (files in sorted order, fixed times
and modes), and made once per process (`client_wheel()`).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import importlib.util
import io
import re
import threading
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

DISTRIBUTION = "platform-sdk"
PACKAGES = ("platform_sdk", "platform_contracts", "simulusion")
# Requirements of platform-sdk whose code the wheel itself holds.
BUNDLED = frozenset({"platform-contracts"})
# The SDK's environment-server side, left out of the client wheel: its files (paths in the
# wheel; a folder ends with "/") and the extra that brings its libraries.
SERVER_SIDE = ("platform_sdk/__main__.py", "platform_sdk/server_extra.py", "platform_sdk/server/",
               "platform_sdk/check/", "platform_sdk/launch/", "platform_sdk/menagerie/")
SERVER_EXTRAS = frozenset({"server"})
_EXTRA_MARKER = re.compile(r"extra\s*==\s*['\"]([^'\"]+)['\"]")
WHEEL_TAG = "py3-none-any"
_SKIPPED_DIRS = frozenset({"__pycache__"})
_SKIPPED_SUFFIXES = (".pyc", ".pyo")
_DATE_TIME = (1980, 1, 1, 0, 0, 0)  # zip's earliest: the same bytes on every build
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_GENCODE = re.compile(rb"^# Protobuf Python Version: (\d+)\.(\d+)\.(\d+)\s*$", re.MULTILINE)


class ClientWheelError(Exception):
    """The installation lacks what the wheel is built from (a package or the distribution)."""


@dataclass(frozen=True)
class ClientWheel:
    filename: str
    data: bytes
    version: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def canonical_name(name: str) -> str:
    """A project name as PEP 503 compares them (`Platform_SDK` -> `platform-sdk`)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def package_files(package: str) -> Iterator[tuple[str, Path]]:
    """(path in the wheel, file on disk) of every file of an installed package, sorted."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ClientWheelError(f"the package {package} is not installed with the gateway: the client wheel "
                               f"is built from it (install platform-sdk, which brings {', '.join(PACKAGES)})")
    found: dict[str, Path] = {}
    for location in spec.submodule_search_locations:
        root = Path(location)
        for path in root.rglob("*"):
            relative = path.relative_to(root)
            if not path.is_file() or _SKIPPED_DIRS.intersection(relative.parts) or path.suffix in _SKIPPED_SUFFIXES:
                continue
            found.setdefault("/".join((package, *relative.parts)), path)
    return iter(sorted(found.items()))


def in_client(name: str) -> bool:
    """Whether the file `name` (its path in the wheel) belongs to the client wheel."""
    return not any(name == part or (part.endswith("/") and name.startswith(part)) for part in SERVER_SIDE)


def _gencode_version(files: Iterable[tuple[str, bytes]]) -> tuple[int, int, int] | None:
    """The newest protobuf version the bundled generated code was made by (None: no such code)."""
    versions: list[tuple[int, int, int]] = []
    for name, data in files:
        if name.endswith("_pb2.py"):
            versions += [(int(major), int(minor), int(patch)) for major, minor, patch in _GENCODE.findall(data[:2048])]
    return max(versions) if versions else None


def requirements(distribution: importlib.metadata.Distribution,
                 protobuf_floor: tuple[int, int, int] | None) -> list[str]:
    """The distribution's Requires-Dist, without the bundled ones and the server extra's;
    protobuf (the base one) with `protobuf_floor` added as a lower bound."""
    kept: list[str] = []
    for requirement in distribution.requires or []:
        match = _NAME.match(requirement)
        name = canonical_name(match.group(1)) if match else ""
        extra = _EXTRA_MARKER.search(requirement)
        if name in BUNDLED or (extra and extra.group(1) in SERVER_EXTRAS):
            continue
        if match and name == "protobuf" and protobuf_floor is not None and ";" not in requirement:
            floor = ">=" + ".".join(map(str, protobuf_floor))
            rest = requirement[match.end():].strip()
            requirement = f"protobuf{rest},{floor}" if rest else f"protobuf{floor}"
        kept.append(requirement)
    return kept


def metadata_text(distribution: importlib.metadata.Distribution, requires: list[str]) -> str:
    meta = distribution.metadata
    lines = ["Metadata-Version: 2.1", f"Name: {DISTRIBUTION}", f"Version: {distribution.version}"]
    for field in ("Summary", "Requires-Python"):
        lines += [f"{field}: {value}" for value in (meta.get_all(field) or [])[:1]]
    extras = set(meta.get_all("Provides-Extra") or []) - SERVER_EXTRAS
    lines += [f"Provides-Extra: {extra}" for extra in sorted(extras)]
    lines += [f"Requires-Dist: {requirement}" for requirement in requires]
    return "\n".join(lines) + "\n"


def entry_points_text(distribution: importlib.metadata.Distribution) -> str:
    """The distribution's entry points whose module is in the client wheel."""
    groups: dict[str, list[str]] = {}
    for entry in sorted(distribution.entry_points, key=lambda e: (e.group, e.name)):
        module_path = entry.module.replace(".", "/")
        if not (in_client(module_path + ".py") and in_client(module_path + "/__init__.py")):
            continue
        groups.setdefault(entry.group, []).append(f"{entry.name} = {entry.value}")
    return "".join(f"[{group}]\n" + "\n".join(entries) + "\n\n" for group, entries in groups.items())


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_client_wheel() -> ClientWheel:
    """Build the wheel from the running installation (see the module's docstring)."""
    try:
        distribution = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise ClientWheelError(f"the distribution {DISTRIBUTION} is not installed with the gateway: "
                               "the client wheel is built from it") from None
    version = distribution.version
    stem = f"{DISTRIBUTION.replace('-', '_')}-{version.replace('-', '_')}"
    dist_info = f"{stem}.dist-info"
    files = [(name, path.read_bytes()) for package in PACKAGES for name, path in package_files(package)
             if in_client(name)]
    entry_points = entry_points_text(distribution)
    files += [
        (f"{dist_info}/METADATA", metadata_text(distribution, requirements(distribution, _gencode_version(files))).encode()),
        (f"{dist_info}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: platform-gateway (client_wheel)\n"
                                f"Root-Is-Purelib: true\nTag: {WHEEL_TAG}\n").encode()),
    ]
    if entry_points:
        files.append((f"{dist_info}/entry_points.txt", entry_points.encode()))
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data in files:
        writer.writerow([name, _record_hash(data), len(data)])
    writer.writerow([f"{dist_info}/RECORD", "", ""])
    files.append((f"{dist_info}/RECORD", record.getvalue().encode()))

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=_DATE_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return ClientWheel(filename=f"{stem}-{WHEEL_TAG}.whl", data=buffer.getvalue(), version=version)


_lock = threading.Lock()
_built: ClientWheel | None = None


def client_wheel() -> ClientWheel:
    """The wheel, built on first use and then kept for the process's life."""
    global _built
    with _lock:
        if _built is None:
            _built = build_client_wheel()
        return _built
