"""The generated code matches the .proto files (`make gen` regenerates it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CONTRACTS = Path(__file__).resolve().parents[1]


def test_generated_code_is_up_to_date(tmp_path):
    protos = sorted(str(p.relative_to(CONTRACTS / "proto")) for p in (CONTRACTS / "proto").rglob("*.proto"))
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-I.", f"--python_out={tmp_path}", f"--grpc_python_out={tmp_path}",
         *protos],
        cwd=CONTRACTS / "proto", check=True,
    )
    committed = CONTRACTS / "src"
    stale = []
    for generated in tmp_path.rglob("*_pb2*.py"):
        rel = generated.relative_to(tmp_path)
        target = committed / rel
        if rel.name.endswith("_grpc.py") and "class " not in generated.read_text():
            continue
        if not target.exists() or target.read_bytes() != generated.read_bytes():
            stale.append(str(rel))
    assert not stale, f"Protos changed: run `make gen` and commit ({stale})"


def test_every_message_field_is_documented_in_the_architecture():
    text = (CONTRACTS.parents[1] / "docs" / "architecture.md").read_text()
    for name in ("StepEvent", "SessionEvent", "SnapshotEvent", "Environment", "PLATFORM_SESSIONS"):
        assert name in text
