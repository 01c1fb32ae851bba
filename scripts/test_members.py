"""Run each workspace member's own tests in an environment of that member alone, then the web
app's (web/: its type check and Vitest tests), then the cross-service tests (tests/) in the
workspace's environment: in parallel (pytest-xdist), then the tests marked `alone` by themselves.

A member's environment (.venvs/<name>, kept between runs) is `uv sync --package <name>`: the
member, its [project] dependencies and its own dev group, nothing a sibling declares. So a
member whose code or tests import a package it does not declare fails here, by name.

    python scripts/test_members.py                   every member, then tests/
    python scripts/test_members.py sdk web tests      some of them (a name or a path)
    python scripts/test_members.py --sync-only        build or refresh the environments only
    python scripts/test_members.py broker -- -x -k main   arguments after -- go to pytest

uv is `$UV` (a command line, as the Makefile passes it) or `uv` on PATH. The web step needs
Node.js 20+ (scripts/web_node.py) and runs `npm ci` first when web/node_modules is stale.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import web_node

REPO = Path(__file__).resolve().parents[1]
ENVS = REPO / ".venvs"
CROSS_SERVICE = "tests"
# What only tests/ needs beyond the workspace's dev group: Stable-Baselines3 and its torch (with
# PyPI's CUDA wheels, several GB), kept out of `make setup` so that `make run` never fetches them.
CROSS_SERVICE_GROUPS = ("sb3",)
# tests/ marked this run after the parallel pool, by themselves: Ray's worker processes failed to
# register within Ray's timeout when the pool's platforms shared the two cores with them (CI)
ALONE_MARK = "alone"
NO_TESTS_COLLECTED = 5  # pytest's exit status
# Left out of the tests' environment (as the Makefile does): the tests start hundreds of Python
# processes, and without bytecode caches each compiles every module it imports again.
NO_BYTECODE = "PYTHONDONTWRITEBYTECODE"
WEB = "web"


@dataclass(frozen=True)
class Suite:
    """One pytest run: a member's tests in its own environment, or tests/ in the workspace's; or
    the web app's checks (`WEB`: tsc and Vitest, no Python environment)."""

    name: str
    folder: str  # relative to the repository
    isolated: bool  # False: the workspace's environment (the interpreter running this script)

    @property
    def env_dir(self) -> Path:
        return ENVS / self.name if self.isolated else Path(sys.prefix)

    @property
    def python(self) -> Path:
        return self.env_dir / "bin" / "python" if self.isolated else Path(sys.executable)


@dataclass
class Outcome:
    suite: Suite
    sync_s: float = 0.0
    test_s: float = 0.0
    ok: bool = True
    result: str = ""


def workspace_members() -> list[tuple[str, str]]:
    """(package name, folder) of each member named by [tool.uv.workspace] members."""
    root = tomllib.loads((REPO / "pyproject.toml").read_text())
    members = []
    for pattern in root["tool"]["uv"]["workspace"]["members"]:
        for folder in sorted(REPO.glob(pattern)):
            pyproject = folder / "pyproject.toml"
            if pyproject.is_file():
                name = tomllib.loads(pyproject.read_text())["project"]["name"]
                members.append((name, str(folder.relative_to(REPO))))
    return members


def all_suites() -> list[Suite]:
    suites = [Suite(name, f"{folder}/tests", True) for name, folder in workspace_members()]
    return [*suites, Suite(WEB, WEB, False), Suite(CROSS_SERVICE, CROSS_SERVICE, False)]


def select(suites: list[Suite], wanted: list[str]) -> list[Suite]:
    """The suites named by package name, short name (`broker`) or folder, in the usual order."""
    def keys(suite: Suite) -> set[str]:
        folder = suite.folder.removesuffix("/tests") if suite.isolated else suite.folder
        return {suite.name, suite.name.removeprefix("platform-"), folder, folder.rsplit("/", 1)[-1]}

    unknown = [w for w in wanted if not any(w.rstrip("/") in keys(s) for s in suites)]
    if unknown:
        names = ", ".join(s.name for s in suites)
        sys.exit(f"error: no workspace member {', '.join(unknown)} (members: {names})")
    return [s for s in suites if any(w.rstrip("/") in keys(s) for w in wanted)]


def uv_command() -> list[str]:
    return shlex.split(os.environ.get("UV") or "uv")


def child_env(env_dir: Path) -> dict[str, str]:
    """This process's environment with `env_dir` as the active one: its bin/ first on PATH and
    no other environment's bin/ (make runs this script through `uv run`, which puts the
    workspace's there), so subprocesses that tests start find only what the member declares;
    Python may write its bytecode caches (NO_BYTECODE)."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", NO_BYTECODE)}
    others = {str(Path(sys.prefix) / "bin"), str(REPO / ".venv" / "bin")}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p not in others]
    env["PATH"] = os.pathsep.join([str(env_dir / "bin"), *path])
    env["VIRTUAL_ENV"] = str(env_dir)
    return env


def sync(suite: Suite) -> bool:
    """Create or refresh the member's environment from uv.lock (a no-op when it is current)."""
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["UV_PROJECT_ENVIRONMENT"] = str(suite.env_dir)
    frozen = ["--frozen"] if (REPO / "uv.lock").is_file() else []
    command = [*uv_command(), "sync", "--quiet", "--package", suite.name, *frozen]
    return subprocess.run(command, cwd=REPO, env=env).returncode == 0


def sync_workspace_for_tests() -> bool:
    """The workspace's environment with the groups tests/ needs besides the default ones."""
    frozen = ["--frozen"] if (REPO / "uv.lock").is_file() else []
    groups = [arg for group in CROSS_SERVICE_GROUPS for arg in ("--group", group)]
    command = [*uv_command(), "sync", "--quiet", "--all-packages", *groups, *frozen]
    return subprocess.run(command, cwd=REPO).returncode == 0


def parallel_args(suite: Suite, pytest_args: list[str]) -> list[str]:
    """`-n <workers>` for a suite whose environment has pytest-xdist (a member opts in by naming it
    in its dev group; the workspace's has it for tests/), unless the arguments already say how
    to run. Workers: PYTEST_WORKERS, else one per core up to 4. The real-server fixtures are
    isolated per process (free ports, their own folders, throwaway databases), so each worker
    starts its own."""
    if any(arg == "-n" or arg.startswith(("-n", "--numprocesses", "--dist")) or arg == "no:xdist"
           for arg in pytest_args):
        return []
    has_xdist = subprocess.run([str(suite.python), "-c", "import xdist"], capture_output=True).returncode == 0
    if not has_xdist:
        return []
    workers = os.environ.get("PYTEST_WORKERS") or str(min(os.cpu_count() or 1, 4))
    # Whole modules to a worker: a module's fixtures (a platform, a nats-server) start once, not
    # once in each worker that gets one of its tests.
    return ["-n", workers, "--dist", "loadfile"] if workers not in ("0", "1") else []


def run_pytest(suite: Suite, pytest_args: list[str]) -> tuple[bool, str]:
    """pytest on the suite's folder from the repository root (the root's pytest options and
    conftest.py apply), in parallel processes where the suite takes them (`parallel_args`);
    returns (passed, pytest's closing line). A whole tests/ run goes in two passes: the pool,
    then the tests marked `alone` by themselves (ALONE_MARK)."""
    if suite.name != CROSS_SERVICE or pytest_args:
        return _pytest(suite, [*parallel_args(suite, pytest_args), *pytest_args])
    # the slowest tests and modules of tests/ are listed at the end: where make test's time goes
    pooled_ok, pooled = _pytest(suite, [*parallel_args(suite, []), "-m", f"not {ALONE_MARK}",
                                        "--durations=30", "--durations-min=10"])
    print(f"\n==> {suite.name}: the tests marked {ALONE_MARK}, one at a time with nothing beside them", flush=True)
    alone_ok, alone = _pytest(suite, ["-p", "no:xdist", "-m", ALONE_MARK], none_is_ok=True)
    return pooled_ok and alone_ok, f"{pooled}; {ALONE_MARK}: {alone}"


def _pytest(suite: Suite, args: list[str], none_is_ok: bool = False) -> tuple[bool, str]:
    """pytest's outcome and closing line; with `none_is_ok`, selecting no test passes (exit 5)."""
    command = [str(suite.python), "-m", "pytest", "-q", suite.folder, *args]
    process = subprocess.Popen(command, cwd=REPO, env=child_env(suite.env_dir), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, bufsize=1)
    assert process.stdout is not None
    last = ""
    for line in process.stdout:
        sys.stdout.write(line)
        if line.strip():
            last = line.strip().strip("= ")
    code = process.wait()
    return code == 0 or (none_is_ok and code == NO_TESTS_COLLECTED), last


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run_web(suite: Suite, sync_only: bool) -> Outcome:
    """web/: `npm ci` when node_modules is stale (the "env" time), then `npx tsc -b` (the type
    check, tests included) and `npx vitest run`; the result names Vitest's count."""
    outcome = Outcome(suite)
    print(f"\n==> {suite.name} (web/: tsc -b, vitest run)", flush=True)
    problem = web_node.node_problem()
    if problem is not None:
        outcome.ok, outcome.result = False, f"{problem}: {web_node.INSTALL_NODE}"
        print(f"    {outcome.result}", flush=True)
        return outcome
    started = time.monotonic()
    outcome.ok = web_node.ensure_dependencies(lambda message: print(f"    {message}", flush=True))
    outcome.sync_s = time.monotonic() - started
    if not outcome.ok:
        outcome.result = "npm ci failed"
        return outcome
    if sync_only:
        outcome.result = "node_modules ready"
        return outcome
    started = time.monotonic()
    try:
        typecheck = subprocess.run(["npx", "tsc", "-b"], cwd=REPO / WEB)
        if typecheck.returncode != 0:
            outcome.ok, outcome.result = False, "tsc -b: type errors (above)"
            return outcome
        outcome.ok, last = _stream(["npx", "vitest", "run"], REPO / WEB, dict(os.environ, CI="1"))
        summary = [line for line in last if line.lstrip().startswith("Tests")]
        outcome.result = "tsc ok; vitest " + (" ".join(summary[-1].split()[1:]) if summary else "failed")
    finally:
        outcome.test_s = time.monotonic() - started
    return outcome


def _stream(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[bool, list[str]]:
    """Runs `command`, copying its output to ours; returns (passed, its last 20 lines, plain text)."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, bufsize=1)
    assert process.stdout is not None
    last: list[str] = []
    for line in process.stdout:
        sys.stdout.write(line)
        last = [*last[-19:], _ANSI.sub("", line).rstrip()]
    return process.wait() == 0, last


def run(suite: Suite, pytest_args: list[str], sync_only: bool) -> Outcome:
    if suite.name == WEB:
        return run_web(suite, sync_only)
    outcome = Outcome(suite)
    where = f".venvs/{suite.name}" if suite.isolated else "the workspace's environment"
    print(f"\n==> {suite.name} ({suite.folder}) in {where}", flush=True)
    if suite.isolated or suite.name == CROSS_SERVICE:
        started = time.monotonic()
        outcome.ok = sync(suite) if suite.isolated else sync_workspace_for_tests()
        outcome.sync_s = time.monotonic() - started
        if not outcome.ok:
            outcome.result = "uv sync failed"
            return outcome
    if sync_only:
        outcome.result = "environment ready"
        return outcome
    if not (REPO / suite.folder).is_dir():
        outcome.result = "no tests"
        print("    no tests folder", flush=True)
        return outcome
    started = time.monotonic()
    outcome.ok, outcome.result = run_pytest(suite, pytest_args)
    outcome.test_s = time.monotonic() - started
    return outcome


def print_summary(outcomes: list[Outcome], total_s: float) -> None:
    width = max(len(o.suite.name) for o in outcomes)
    print(f"\n{'suite':<{width}}  {'env':>6}  {'tests':>7}  result")
    for o in outcomes:
        mark = "ok  " if o.ok else "FAIL"
        print(f"{o.suite.name:<{width}}  {o.sync_s:5.1f}s  {o.test_s:6.1f}s  {mark} {o.result}")
    failed = [o.suite.name for o in outcomes if not o.ok]
    verdict = f"FAILED: {', '.join(failed)}" if failed else "all passed"
    print(f"{'total':<{width}}  {sum(o.sync_s for o in outcomes):5.1f}s  {total_s:6.1f}s  {verdict}")


def main() -> int:
    argv = sys.argv[1:]
    pytest_args = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suites", nargs="*", help="members (name or folder) and/or `tests`; default: all")
    parser.add_argument("--sync-only", action="store_true", help="build or refresh the environments only")
    args = parser.parse_args(own)
    suites = all_suites()
    if args.suites:
        suites = select(suites, args.suites)
    started = time.monotonic()
    outcomes = [run(suite, pytest_args, args.sync_only) for suite in suites]
    print_summary(outcomes, time.monotonic() - started)
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
