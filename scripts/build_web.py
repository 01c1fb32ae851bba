"""Build the web app (web/ -> web/dist, which the gateway serves at /) when its sources changed.

    python scripts/build_web.py               build when stale (make run runs it first)
    python scripts/build_web.py --force       build even when web/dist is current
    python scripts/build_web.py --keep-going  a failed npm step is reported, exit 0 (make run:
                                              the platform starts with the last build, if any)
    python scripts/build_web.py --require     no Node.js 20+ is an error (exit 1), as for tests

The build is current when web/dist/.build-stamp holds the hash of its sources: web/src,
index.html, package.json, package-lock.json, vite.config.ts, tsconfig.json (and public/ once
there is one). `npm ci` runs first when node_modules is missing or older than the lock file.
Without Node.js 20+ it says so in one line and exits 0 (unless --require): the platform starts
without the web app, and / says how to build it.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from web_node import INSTALL_NODE, WEB, ensure_dependencies, node_problem, node_version, npm

SOURCES = ("src", "public", "index.html", "package.json", "package-lock.json", "vite.config.ts", "tsconfig.json")
"""What the build is made from, relative to web/ (folders: every file below them)."""
STAMP = Path("dist") / ".build-stamp"


def say(message: str) -> None:
    print(f"web: {message}", flush=True)


def source_files(web: Path = WEB) -> Iterator[Path]:
    for name in SOURCES:
        path = web / name
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file())
        elif path.is_file():
            yield path


def sources_hash(web: Path = WEB) -> str:
    """sha256 over each source file's path (relative to web/) and bytes, in path order."""
    digest = hashlib.sha256()
    for path in source_files(web):
        digest.update(path.relative_to(web).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def build_is_current(web: Path = WEB) -> bool:
    stamp = web / STAMP
    return stamp.is_file() and stamp.read_text().strip() == sources_hash(web) and (web / "dist" / "index.html").is_file()


def build(web: Path = WEB, force: bool = False, node: str = "") -> bool:
    """Brings web/dist up to date; returns whether it is (a failed npm step: False)."""
    wanted = sources_hash(web)
    if not force and build_is_current(web):
        say(f"the web app's build is up to date ({web / 'dist'})")
        return True
    if not ensure_dependencies(say, web):
        return False
    say(f"building the web app{f' with Node.js {node}' if node else ''} (npm run build) ...")
    started = time.monotonic()
    if npm(["run", "build", "--silent"], web).returncode != 0:
        say("the web app's build failed (npm run build's output is above)")
        return False
    (web / STAMP).write_text(wanted + "\n")
    say(f"built the web app in {time.monotonic() - started:.1f} s -> {web / 'dist'}")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--force", action="store_true", help="build even when web/dist is current")
    parser.add_argument("--keep-going", action="store_true", help="a failed npm step is reported, exit 0")
    parser.add_argument("--require", action="store_true", help="no Node.js 20+ is an error (exit 1)")
    args = parser.parse_args(argv)
    problem = node_problem()
    if problem is not None:
        if args.require:
            print(f"web: cannot build the web app: {problem}: {INSTALL_NODE}", file=sys.stderr, flush=True)
            return 1
        say(f"{problem}: {INSTALL_NODE}; the platform starts without the web app")
        return 0
    node = "v" + ".".join(map(str, node_version() or ()))
    with open(__file__) as lock:  # one build at a time in this checkout
        fcntl.flock(lock, fcntl.LOCK_EX)
        ok = build(force=args.force, node=node)
    if not ok and args.keep_going:
        say("the platform starts with the web app's last build, if any")
        return 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
