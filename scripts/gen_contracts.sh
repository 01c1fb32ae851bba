#!/usr/bin/env bash
# Regenerates the Python code of libs/contracts from its .proto files. Never edit the output.
set -euo pipefail
cd "$(dirname "$0")/../libs/contracts"
out=src
find "$out/simulusion" -name '*_pb2*.py*' -delete 2>/dev/null || true
protos=$(cd proto && find simulusion -name '*.proto' | sort)
(cd proto && python -m grpc_tools.protoc -I. --python_out=../$out --mypy_out=../$out \
  --grpc_python_out=../$out --mypy_grpc_out=../$out $protos)
# Package markers so the generated modules import as simulusion.<area>.v1.*
find "$out/simulusion" -type d -exec sh -c 'f="$1/__init__.py"; [ -f "$f" ] || : > "$f"' _ {} \;
# grpc_tools writes an empty _grpc module (and mypy-protobuf its stub) for protos without
# services: drop those.
for f in $(find "$out/simulusion" -name '*_pb2_grpc.py'); do
  grep -q "class .*Stub" "$f" || rm -f "$f" "${f}i"
done
