"""One timing window shared by every client process of a concurrent figure.

A client process that starts its own clock when its own sessions are ready measures a window of
its own: with 8 processes those windows need not overlap, and the summed steps over the longest
window overstate what the system does at once (bench/step_rate.py's 8-session figure was 1.5x
the shared-window one). Here every client process connects its sessions, says so, and waits
(a barrier across processes: the coordinator waits for every one of them); the coordinator then
hands all of them the same [start, end] on the system-wide monotonic clock (CLOCK_MONOTONIC on
Linux: the same in every process), and a step counts only when it completes inside it. The
figure is all counted steps / (end - start).

The clients are plain subprocesses speaking a line protocol on stdin/stdout (not
multiprocessing), so a peer's client can run under its own interpreter and virtual environment
(bench/peer_rate.py drives OpenEnv's client from a scratch venv) with the same barrier.

Worker side: `serve(sessions, latencies)`. Coordinator side: `run_window(commands, seconds)`.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

CLIENT = Path(__file__).resolve().parent / "clients" / "window_client.py"
MAX_CLIENT_PROCESSES = 8
READY = "WINDOW ready"
RESULT = "WINDOW result "
LEAD_S = 0.5  # between handing out the window and its start: every thread is asleep by then


@dataclass(frozen=True)
class Window:
    start: float  # time.monotonic()
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


class Session(Protocol):
    """One lockstep session as a client process drives it."""

    def step(self) -> bool:
        """One step with a random action; true when the episode ended."""

    def reset(self) -> None: ...


def sleep_until(deadline: float) -> None:
    while (left := deadline - time.monotonic()) > 0:
        time.sleep(left)


def drive(session: Session, window: Window, latencies: list[float] | None) -> int:
    """Steps `session` in lockstep from the window's start; counts the steps completed by its end
    (and their latencies); a reset after an episode's end takes window time but is no step."""
    sleep_until(window.start)
    count = 0
    while (t0 := time.monotonic()) < window.end:
        done = session.step()
        t1 = time.monotonic()
        if t1 > window.end:
            break
        count += 1
        if latencies is not None:
            latencies.append(t1 - t0)
        if done:
            session.reset()
    return count


def serve(sessions: Sequence[Session], keep_latencies: bool, extra: Mapping[str, Any] | None = None) -> None:
    """Worker side, once every session is connected and reset: says READY, reads the window from
    stdin, drives each session in its own thread, prints one RESULT line (JSON)."""
    window_box: list[Window] = []
    go = threading.Event()
    counts = [0] * len(sessions)
    latencies: list[float] | None = [] if keep_latencies else None

    errors: list[BaseException] = []

    def run(i: int) -> None:
        go.wait()
        try:
            counts[i] = drive(sessions[i], window_box[0], latencies)
        except Exception as exc:  # noqa: BLE001 - raised after the join: a failed session must not pass as idle
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(sessions))]
    for t in threads:
        t.start()
    print(READY, flush=True)
    line = sys.stdin.readline()
    if not line:
        raise SystemExit("the coordinator closed stdin before handing out the window")
    start, end = (float(x) for x in line.split())
    window_box.append(Window(start, end))
    go.set()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"{len(errors)} of {len(sessions)} session(s) failed in the window") from errors[0]
    result = {"steps": sum(counts), "latencies": latencies or [], "pid": os.getpid(), **(extra or {})}
    print(RESULT + json.dumps(result), flush=True)


@dataclass
class WindowRun:
    window: Window
    steps: int
    latencies: list[float]
    results: list[dict[str, Any]]
    samples: tuple[Any, Any] | None = field(default=None)  # `sample(...)` at the start and at the end

    @property
    def rate(self) -> float:
        return self.steps / self.window.seconds


def _pump(index: int, proc: subprocess.Popen[str], lines: queue.Queue[tuple[int, str | None]]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("WINDOW "):
            lines.put((index, line.rstrip("\n")))
        else:
            sys.stdout.write(line)  # the client's own output, passed through
    lines.put((index, None))


def _stop(procs: Sequence[subprocess.Popen[str]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
    for proc in procs:
        proc.wait()


def run_window(commands: Sequence[Sequence[str]], seconds: float,
               sample: Callable[[list[int]], Any] | None = None,
               env: Mapping[str, str] | None = None, ready_timeout: float = 600.0) -> WindowRun:
    """Coordinator side: starts one client process per command, waits until every one is READY,
    hands all of them one window of `seconds`, calls `sample(client_pids)` at its start and end
    (e.g. CPU counters), and gathers their RESULT lines.

    Raises:
        RuntimeError: a client exited or was silent too long before its result (naming it).
    """
    lines: queue.Queue[tuple[int, str | None]] = queue.Queue()
    procs = [subprocess.Popen(list(cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
                              env=dict(env) if env is not None else None) for cmd in commands]
    try:
        for i, proc in enumerate(procs):
            threading.Thread(target=_pump, args=(i, proc, lines), daemon=True).start()

        def expect(prefix: str, deadline: float) -> dict[int, str]:
            got: dict[int, str] = {}
            while len(got) < len(procs):
                try:
                    i, line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    missing = [" ".join(commands[i]) for i in range(len(procs)) if i not in got]
                    raise RuntimeError(f"no '{prefix.strip()}' in time from: {'; '.join(missing)}") from None
                if line is None:
                    if i not in got:
                        raise RuntimeError(f"client exited (status {procs[i].wait()}) before '{prefix.strip()}': "
                                           f"{' '.join(commands[i])}")
                    continue
                if line.startswith(prefix):
                    got[i] = line[len(prefix):]
            return got

        expect(READY, time.monotonic() + ready_timeout)
        start = time.monotonic() + LEAD_S
        window = Window(start, start + seconds)
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write(f"{window.start!r} {window.end!r}\n")
            proc.stdin.flush()
        pids = [proc.pid for proc in procs]
        sleep_until(window.start)
        first = sample(pids) if sample is not None else None
        sleep_until(window.end)
        last = sample(pids) if sample is not None else None
        raw = expect(RESULT, window.end + 120.0)
        for proc in procs:
            proc.wait(timeout=120)
    finally:
        _stop(procs)
    results = [json.loads(raw[i]) for i in range(len(procs))]
    return WindowRun(window, sum(r["steps"] for r in results), [x for r in results for x in r["latencies"]],
                     results, (first, last) if sample is not None else None)


def client_commands(python: str, system: str, url: str, sessions: int, record: bool = False) -> list[list[str]]:
    """The client processes of one figure (bench/clients/window_client.py): one per session up to
    `MAX_CLIENT_PROCESSES`, so one client's GIL is not what is measured, threads beyond; with a
    single session it reports every step's latency."""
    processes = min(sessions, MAX_CLIENT_PROCESSES)
    commands, first_seed = [], 0
    for i in range(processes):
        share = sessions // processes + (1 if i < sessions % processes else 0)
        cmd = [python, str(CLIENT), "--system", system, "--url", url, "--sessions", str(share),
               "--first-seed", str(first_seed)]
        cmd += ["--record"] if record else []
        cmd += ["--latencies"] if sessions == 1 else []
        commands.append(cmd)
        first_seed += share
    return commands
