"""Regenerate the web app's API types from the gateway (make gen; make check-gen compares).

    python scripts/gen_web.py

1. web/openapi.json: the gateway's OpenAPI document (scripts/dump_openapi.py);
2. web/src/api/schema.d.ts: its TypeScript types (`npm run gen` in web/: openapi-typescript),
   after `npm ci` when node_modules is missing or older than package-lock.json;
3. web/src/gen/: the environment protocol's messages (libs/contracts/proto/simulusion/env/v1)
   as TypeScript for @bufbuild/protobuf (protoc from grpcio-tools with web's protoc-gen-es), for
   the session page's binary steps.
Needs Node.js 20+: without it, one line says so and the exit status is 1.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import dump_openapi
from web_node import INSTALL_NODE, WEB, ensure_dependencies, node_problem, npm

GENERATED = ("web/openapi.json", "web/src/api/schema.d.ts", "web/src/gen")
PROTO_ROOT = WEB.parent / "libs" / "contracts" / "proto"
WEB_PROTOS = ("simulusion/env/v1/values.proto", "simulusion/env/v1/environment.proto")
PROTO_OUT = WEB / "src" / "gen"


def say(message: str) -> None:
    print(f"gen_web: {message}", file=sys.stderr, flush=True)


def main() -> int:
    problem = node_problem()
    if problem is not None:
        say(f"{problem}: generating web/src/api/schema.d.ts (and make test's web step) needs Node.js 20+: "
            f"{INSTALL_NODE}")
        return 1
    dump_openapi.main()  # to its default path, web/openapi.json
    if not ensure_dependencies(say):
        return 1
    generated = npm(["run", "gen", "--silent"], capture=True)
    if generated.returncode != 0:
        say(f"npm run gen failed:\n{generated.stdout}{generated.stderr}")
        return 1
    return generate_protos()


def generate_protos() -> int:
    """web/src/gen/ from the environment protocol's .proto files (replaced whole)."""
    plugin = WEB / "node_modules" / ".bin" / "protoc-gen-es"
    shutil.rmtree(PROTO_OUT, ignore_errors=True)
    PROTO_OUT.mkdir(parents=True)
    command = [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_ROOT}", f"--plugin=protoc-gen-es={plugin}",
               f"--es_out={PROTO_OUT}", "--es_opt=target=ts", *WEB_PROTOS]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        say(f"protoc (protoc-gen-es) failed:\n{done.stdout}{done.stderr}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
