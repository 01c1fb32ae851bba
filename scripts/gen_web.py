"""Regenerate the web app's API types from the gateway (make gen; make check-gen compares).

    python scripts/gen_web.py

1. web/openapi.json: the gateway's OpenAPI document (scripts/dump_openapi.py);
2. web/src/api/schema.d.ts: its TypeScript types (`npm run gen` in web/: openapi-typescript),
   after `npm ci` when node_modules is missing or older than package-lock.json.
Needs Node.js 20+: without it, one line says so and the exit status is 1.
"""

from __future__ import annotations

import sys

import dump_openapi
from web_node import INSTALL_NODE, ensure_dependencies, node_problem, npm

GENERATED = ("web/openapi.json", "web/src/api/schema.d.ts")


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
    return 0


if __name__ == "__main__":
    sys.exit(main())
