"""The platform beside OpenEnv (the best-known peer), the same CartPole work, in one run.

OpenEnv (`openenv-core` on PyPI) serves each environment from one FastAPI process (uvicorn) over
a WebSocket of JSON. This script installs it into a scratch virtual environment under its cache
folder (made once, reused by later runs with the same `--cache-dir`), serves Gymnasium's
CartPole-v1 through it as OpenEnv's docs show (bench/clients/openenv_cartpole.py) and drives it
with OpenEnv's own client; the platform's side is `platform_sdk.connect("cartpole")` as the SDK
does it by default. Rounds rotate the systems (platform, OpenEnv, platform, OpenEnv, ...) so a
drift of the machine's speed weighs on both. Each figure is lockstep stepping of N sessions
over one window shared by all their client processes (bench/shared_window.py: up to 8 client
processes, threads beyond, a common start and end), with CPU per step of each system's server
processes (every process of the platform: nats-server, gateway, broker, env host, its
environment instances, recorder; OpenEnv's uvicorn process and any children) and of the client
processes, from /proc utime + stime over that window (bench/proc_cpu.py). Also one recorded
platform session per round.

Prints each round's figures as measured, then medians of the rounds with their spread
(min-max) and the ratio platform/OpenEnv of the medians.

    uv run python bench/peer_rate.py                       # starts a platform in a temp dir
    uv run python bench/peer_rate.py --rounds 5 --seconds 10
    uv run python bench/peer_rate.py --url http://127.0.0.1:8000   # no platform server CPU then
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from proc_cpu import cpu_used, sample_tree
from shared_window import client_commands, run_window

CLIENTS_DIR = Path(__file__).resolve().parent / "clients"
# uvicorn[standard] gives OpenEnv's server uvloop and httptools (uvicorn picks them itself), as
# the platform's gateway has: the peer is measured at its fastest.
PEER_PACKAGES = ["openenv-core", "gymnasium", "uvicorn[standard]"]
PLATFORM, OPENENV = "platform", "OpenEnv"


@dataclass(frozen=True)
class Figure:
    rate: float
    p50_us: float | None
    p99_us: float | None
    server_us: float | None  # CPU per step of the system's server processes
    client_us: float  # CPU per step of the client processes
    paths: str


# -- the peer: a scratch venv with openenv-core, and its uvicorn server ------------------------

def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _versions(python: Path) -> str | None:
    """The peer's package versions, or None when the venv cannot import them."""
    code = ("import importlib.metadata as m, importlib.util as u, openenv, gymnasium, uvicorn;"
            "print(', '.join(f'{p} {m.version(p)}' for p in ('openenv-core', 'gymnasium', 'fastapi', 'uvicorn',"
            " 'websockets', 'pydantic')) + ', uvloop ' + ('yes' if u.find_spec('uvloop') else 'no'))")
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def peer_venv(cache_dir: Path) -> Path:
    """The scratch venv's python with openenv-core, made (with its installer's progress shown) unless
    an earlier run left a working one in `cache_dir`."""
    venv = cache_dir / "openenv-venv"
    python = _venv_python(venv)
    if python.exists() and (versions := _versions(python)) and "uvloop yes" in versions:
        print(f"OpenEnv: reusing the venv in {venv} ({versions})", flush=True)
        return python
    shutil.rmtree(venv, ignore_errors=True)
    cache_dir.mkdir(parents=True, exist_ok=True)
    uv = shutil.which("uv")
    print(f"OpenEnv: installing {' '.join(PEER_PACKAGES)} into {venv} ({'uv' if uv else 'venv + pip'}) ...",
          flush=True)
    if uv:
        subprocess.run([uv, "venv", "--python", sys.executable, str(venv)], check=True)
        subprocess.run([uv, "pip", "install", "--python", str(python), *PEER_PACKAGES], check=True)
    else:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", *PEER_PACKAGES], check=True)
    versions = _versions(python)
    if versions is None:
        raise SystemExit(f"OpenEnv: the venv in {venv} cannot import openenv after installing it")
    print(f"OpenEnv: installed {versions}", flush=True)
    return python


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_http(url: str, server: subprocess.Popen[bytes], log: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if server.poll() is not None:
            raise SystemExit(f"OpenEnv: its server exited (status {server.returncode}); log in {log}")
        try:
            with urllib.request.urlopen(url, timeout=2.0) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"OpenEnv: no answer from {url} within {timeout:g}s; log in {log}")
        time.sleep(0.2)


@contextmanager
def openenv_server(python: Path, log_dir: Path, max_sessions: int) -> Iterator[tuple[str, int]]:
    """OpenEnv's CartPole served by uvicorn (one process, as OpenEnv's images run it): its URL and pid."""
    port = _free_port()
    log = log_dir / "openenv-server.log"
    env = {**os.environ, "BENCH_OPENENV_MAX_SESSIONS": str(max_sessions)}
    with open(log, "wb") as out:
        server = subprocess.Popen([str(python), "-m", "uvicorn", "openenv_cartpole:app", "--host", "127.0.0.1",
                                   "--port", str(port), "--app-dir", str(CLIENTS_DIR)],
                                  stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_http(url + "/health", server, log)
        yield url, server.pid
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


# -- the platform ------------------------------------------------------------------------------

@contextmanager
def platform_server(url: str | None) -> Iterator[tuple[str, Callable[[], list[int]] | None]]:
    """`url` (its processes unknown: no server CPU), or a platform started in a temp dir, with the
    pids of the launcher's children (nats-server and every service; their descendants, the
    environment instances, are walked from /proc at each sample)."""
    if url is not None:
        yield url, None
        return
    from platform_local import LocalPlatform

    data_dir = Path(tempfile.mkdtemp(prefix="bench-peer-rate-"))
    print(f"starting a platform in {data_dir} ...", flush=True)
    platform = LocalPlatform(data_dir)
    platform.start()
    try:
        yield platform.url, lambda: list(platform.pids().values())
    finally:
        platform.stop()


# -- one figure --------------------------------------------------------------------------------

def measure(python: str, system: str, url: str, sessions: int, seconds: float, record: bool,
            server_roots: Callable[[], list[int]] | None) -> Figure:
    roots = server_roots() if server_roots is not None else []

    def sample(client_pids: list[int]) -> tuple[dict[int, float], dict[int, float]]:
        return sample_tree(roots), sample_tree(client_pids)

    run = run_window(client_commands(python, system, url, sessions, record), seconds, sample)
    assert run.samples is not None
    (server0, client0), (server1, client1) = run.samples
    steps = max(run.steps, 1)
    server_us = cpu_used(server0, server1) / steps * 1e6 if server_roots is not None else None
    p50 = p99 = None
    if run.latencies:
        p50 = float(np.percentile(run.latencies, 50)) * 1e6
        p99 = float(np.percentile(run.latencies, 99)) * 1e6
    paths = ", ".join(sorted({p for r in run.results for p in r.get("paths", []) if p != "None"}))
    return Figure(run.rate, p50, p99, server_us, cpu_used(client0, client1) / steps * 1e6, paths)


def describe(figure: Figure) -> str:
    text = f"{figure.rate:,.0f} steps/s"
    if figure.p50_us is not None and figure.p99_us is not None:
        text += f", p50 {figure.p50_us:,.0f} µs, p99 {figure.p99_us:,.0f} µs"
    server = f"{figure.server_us:,.0f} µs" if figure.server_us is not None else "n/a (--url)"
    text += f"; CPU per step: server {server}, client {figure.client_us:,.0f} µs"
    return text + (f" (stream path: {figure.paths})" if figure.paths else "")


def _label(sessions: int) -> str:
    return f"{sessions:>3} session{'s' if sessions > 1 else ' '}"


# -- the summary -------------------------------------------------------------------------------

def _spread(values: Sequence[float], digits: str = ",.0f") -> str:
    return f"{statistics.median(values):{digits}} ({min(values):{digits}}-{max(values):{digits}})"


def summary(figures: dict[tuple[str, int, bool], list[Figure]], sessions: Sequence[int], rounds: int) -> None:
    print(f"\nmedians of {rounds} round(s) (min-max); ratio: platform/OpenEnv of the medians")
    metrics: list[tuple[str, Callable[[Figure], float | None]]] = [
        ("steps/s", lambda f: f.rate), ("p50 µs", lambda f: f.p50_us), ("p99 µs", lambda f: f.p99_us),
        ("server CPU µs/step", lambda f: f.server_us), ("client CPU µs/step", lambda f: f.client_us)]
    for n in sessions:
        for name, get in metrics:
            ours = [v for f in figures[(PLATFORM, n, False)] if (v := get(f)) is not None]
            theirs = [v for f in figures[(OPENENV, n, False)] if (v := get(f)) is not None]
            if not ours or not theirs:
                continue
            ratio = statistics.median(ours) / statistics.median(theirs)
            print(f"{_label(n)} {name:<19} platform {_spread(ours):>22} | OpenEnv {_spread(theirs):>22} | "
                  f"ratio {ratio:.2f}")
    recorded = figures.get((PLATFORM, 1, True), [])
    if recorded:
        line = f"platform   1 session  recorded: {_spread([f.rate for f in recorded])} steps/s"
        p50s = [f.p50_us for f in recorded if f.p50_us is not None]
        if p50s:
            line += f", p50 {_spread(p50s)} µs"
        servers = [f.server_us for f in recorded if f.server_us is not None]
        if servers:
            line += f", server CPU {_spread(servers)} µs/step"
        line += f", client CPU {_spread([f.client_us for f in recorded])} µs/step"
        print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an already running platform (default: start one; with --url "
                                      "its server CPU is not measured)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each measuring both systems")
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring window per figure")
    parser.add_argument("--sessions", default="1,8,64", help="concurrent session counts")
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "bench-peer-rate",
                        help="where the scratch venv with openenv-core lives (reused when present)")
    args = parser.parse_args()
    sessions = [int(x) for x in args.sessions.split(",")]

    peer_python = peer_venv(args.cache_dir)
    figures: dict[tuple[str, int, bool], list[Figure]] = {}
    with platform_server(args.url) as (platform_url, platform_roots), \
            openenv_server(peer_python, args.cache_dir, max(sessions) + 8) as (peer_url, peer_pid):
        systems = [(PLATFORM, sys.executable, platform_url, platform_roots),
                   (OPENENV, str(peer_python), peer_url, lambda: [peer_pid])]
        for round_ in range(1, args.rounds + 1):
            for n in sessions:
                for system, python, url, roots in systems:
                    figure = measure(python, system.lower(), url, n, args.seconds, False, roots)
                    figures.setdefault((system, n, False), []).append(figure)
                    print(f"round {round_}/{args.rounds}: {system:<8} {_label(n)} {describe(figure)}", flush=True)
            figure = measure(sys.executable, "platform", platform_url, 1, args.seconds, True, platform_roots)
            figures.setdefault((PLATFORM, 1, True), []).append(figure)
            print(f"round {round_}/{args.rounds}: platform {_label(1)} recorded: {describe(figure)}", flush=True)
    summary(figures, sessions, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
