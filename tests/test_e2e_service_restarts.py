"""One service's crash is not the platform's: the real launcher (`python -m platform_local`)
starts a `kill -9`ed service again while a session steps.

- the broker: stepping goes on; once it is back a new session can be made, the old one lives;
- the recorder: stepping goes on; it catches up from JetStream, every step recorded once;
- the env host: only its sessions end (410 with the reason), a recorded one's recording ends
  `crashed` with the reason and every step JetStream holds; new sessions work once it is back;
- a service that keeps crashing stops the platform with its last lines and status 1;
- the launcher itself `kill -9`ed: no process of the platform is left (within 60 s).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nats
import platform_sdk
import pytest
from platform_contracts import subjects
from platform_contracts.step_batches import parse_batch
from platform_local.local_platform import free_port
from platform_local.procs import descendants, pid_alive
from platform_testing.platform import clean_env
from platform_testing.waiting import instance_pids, wait_for
from simulusion.bus.v1.events_pb2 import StepEvent

BANNER = "Simulusion is running at"
START_S = 120.0  # the whole platform's start on a busy 2-core machine
BACK_S = 60.0  # a service killed, started again after its delay, serving again


class Launcher:
    """`python -m platform_local` under `root` on a free port, its output collected by threads."""

    def __init__(self, root: Path, **settings: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.nats_port = free_port()  # the test reads JetStream too
        self.nats_url = f"nats://127.0.0.1:{self.nats_port}"
        env = clean_env() | {"PLATFORM_PORT": str(self.port), "PLATFORM_NATS_PORT": str(self.nats_port),
                             "PLATFORM_DATA_DIR": str(root / "data"),
                             "PLATFORM_RECORDINGS": str(root / "recordings"),
                             "PLATFORM_CACHE_DIR": str(root / "cache"),
                             # the launcher's warm pools and previews ahead: tests/web/test_first_frame.py's
                             "PLATFORM_POOLS": "", "PLATFORM_WARM_PREVIEWS": "", **settings}
        self.process = subprocess.Popen([sys.executable, "-m", "platform_local"], env=env, cwd=root,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(stream, lines), daemon=True)
                         for stream, lines in ((self.process.stdout, self.stdout), (self.process.stderr, self.stderr))]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream: object, lines: list[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            lines.append(line.rstrip("\n"))

    def output(self) -> str:
        return "\n".join(self.stdout + self.stderr)

    def wait_started(self) -> None:
        wait_for(lambda: any(BANNER in line for line in self.stdout) or self.process.poll() is not None,
                 timeout=START_S, what="the platform to start")
        assert self.process.poll() is None, f"the launcher exited:\n{self.output()}"

    def service_pid(self, name: str) -> int | None:
        """The pid of the running `python -m platform_<name>` child, else None."""
        for pid in descendants(self.process.pid):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[1:3] == [b"-m", f"platform_{name}".encode()]:
                return pid
        return None

    def kill_service(self, name: str) -> int:
        """`kill -9` of one service, as a crash would; returns its pid."""
        pid = self.service_pid(name)
        assert pid is not None, f"{name} is not running:\n{self.output()}"
        os.kill(pid, signal.SIGKILL)
        return pid

    def wait_restarted(self, name: str, old_pid: int) -> int:
        """Waits until the launcher has started `name` again; its new pid."""
        return wait_for(lambda: (pid := self.service_pid(name)) not in (None, old_pid) and pid,
                        timeout=BACK_S, what=f"{name} to be started again\n{self.output()}")

    def stop(self) -> int:
        """Ctrl-C; its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(60)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            for reader in self._readers:
                reader.join(5)


@pytest.fixture(scope="module")
def launcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launcher]:
    """One platform under the real launcher for the kills of this module that leave it running."""
    running = Launcher(tmp_path_factory.mktemp("restarts"))
    try:
        running.wait_started()
        yield running
        assert running.process.poll() is None, f"the launcher stopped:\n{running.output()}"
    finally:
        assert running.stop() == 0, running.output()


class Stepper:
    """Steps a session in a thread until stopped; counts the steps and keeps the first error."""

    def __init__(self, env: platform_sdk.RemoteEnv) -> None:
        self.env = env
        self.actions: list[int] = []
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                action = len(self.actions) % 2
                _, _, terminated, truncated, _ = self.env.step(action)
                self.actions.append(action)
                if terminated or truncated:
                    self.env.reset()
                    self.actions.append(-1)  # a reset: one more recorded event, no action
                time.sleep(0.005)  # a few hundred steps a second: the 2 cores are shared
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            self.error = exc

    def __enter__(self) -> Stepper:
        self._thread.start()
        return self

    def steps_after(self, count: int, timeout: float = 30.0) -> None:
        """Waits until `count` more steps have been taken (fails on a stepping error)."""
        target = len(self.actions) + count
        wait_for(lambda: self.error is not None or len(self.actions) >= target, timeout=timeout,
                 what=f"{count} more steps")
        assert self.error is None, f"stepping failed: {self.error!r}"

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)


def created(url: str) -> str | None:
    """A new cartpole session's id, closed at once; None while the platform cannot make one."""
    try:
        reply = httpx.post(f"{url}/v0/sessions", json={"env_id": "cartpole"}, timeout=30)
    except httpx.HTTPError:
        return None
    if reply.status_code != 201:
        return None
    sid = reply.json()["id"]
    httpx.delete(f"{url}/v0/sessions/{sid}", timeout=30)
    return sid


def recorded_seqs(url: str, recording: dict[str, Any]) -> list[int]:
    """The seqs of every event of a recording's episodes, as the API serves them, in order."""
    seqs: list[int] = []
    for episode in recording["episodes"]:
        reply = httpx.get(f"{url}/v0/recordings/{recording['id']}/episodes/{episode['index']}",
                          params={"arrays": "seq"}, timeout=30)
        assert reply.status_code == 200, reply.text
        seqs += [episode["first_seq"], *reply.json()["arrays"]["seq"]["data"]]
    return seqs


def ended_recording(url: str, session_id: str, status: str) -> dict[str, Any]:
    """The session's recording once the recorder has ended it with `status`."""
    return wait_for(lambda: (r := httpx.get(f"{url}/v0/recordings/{session_id}", timeout=10)).status_code == 200
                    and r.json().get("status") == status and r.json(),
                    timeout=BACK_S, what=f"the recording of {session_id} to be {status}")


class StoredSteps(threading.Thread):
    """The highest step seq JetStream stored for a session, seen through an ordered consumer of
    its step subjects from the stream's start (the recorder deletes written step events from the
    stream, so they are watched as they are stored, not read afterwards)."""

    def __init__(self, nats_url: str, session_id: str) -> None:
        super().__init__(daemon=True)
        self.nats_url, self.session_id = nats_url, session_id
        self.top = 0
        self.watching = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._done: asyncio.Future[None] | None = None

    def run(self) -> None:
        self._loop.run_until_complete(self._watch())

    async def _watch(self) -> None:
        self._done = self._loop.create_future()
        nc = await nats.connect(self.nats_url)
        js = nc.jetstream()
        parsers = {subjects.session_steps(self.session_id): lambda data: [StepEvent.FromString(data)],
                   subjects.session_step_batches(self.session_id): parse_batch}

        async def on_msg(msg: Any) -> None:
            self.top = max(self.top, *(event.seq for event in parsers[msg.subject](msg.data)))

        subs = [await js.subscribe(subject, cb=on_msg, ordered_consumer=True) for subject in parsers]
        self.watching.set()
        await self._done
        for sub in subs:
            await sub.unsubscribe()
        await nc.close()

    def stop(self, settle: float = 2.0) -> int:
        """The highest seq stored, once what was stored has had `settle` seconds to arrive."""
        time.sleep(settle)
        self._loop.call_soon_threadsafe(lambda: self._done is not None and self._done.set_result(None))
        self.join(30)
        return self.top


def test_a_killed_broker_is_started_again_and_sessions_step_on(launcher: Launcher) -> None:
    with platform_sdk.connect("cartpole", url=launcher.url) as env:
        env.reset(seed=0)
        with Stepper(env) as stepper:
            stepper.steps_after(20)
            old = launcher.kill_service("broker")
            stepper.steps_after(50)  # the broker is not on the step path
            launcher.wait_restarted("broker", old)
            assert wait_for(lambda: created(launcher.url), timeout=BACK_S, what="a new session with the broker back")
            stepper.steps_after(50)  # the restarted broker's reconcile kept this live session
        session = httpx.get(f"{launcher.url}/v0/sessions/{env.session_id}", timeout=10).json()
        assert session["state"] == "running", session
    assert "broker was killed by SIGKILL; starting it again in 0.5 s" in launcher.output()


def test_a_killed_recorder_catches_up_and_loses_no_step(launcher: Launcher) -> None:
    with platform_sdk.connect("cartpole", url=launcher.url, record=True) as env:
        sid = env.session_id
        env.reset(seed=0)
        with Stepper(env) as stepper:
            stepper.steps_after(30)
            old = launcher.kill_service("recorder")
            stepper.steps_after(100)  # the recorder is not on the step path either
            launcher.wait_restarted("recorder", old)
            stepper.steps_after(50)
        events = 1 + len(stepper.actions)  # the first reset, then each step or reset
    assert events > 180
    recording = wait_for(lambda: (r := httpx.get(f"{launcher.url}/v0/recordings/{sid}", timeout=10)).status_code == 200
                         and r.json().get("status") == "closed" and r.json(),
                         timeout=BACK_S, what="the recording to be closed")
    assert recording["last_seq"] == events, "every step and reset recorded"
    assert recorded_seqs(launcher.url, recording) == list(range(1, events + 1)), "each event once, in order"


@pytest.mark.parametrize("durable", [False, True], ids=["gathered", "durable"])
def test_a_killed_env_host_ends_only_its_sessions_and_comes_back(launcher: Launcher, durable: bool) -> None:
    env = platform_sdk.connect("cartpole", url=launcher.url, record=True, durable=durable)
    sid = env.session_id
    stored_steps = StoredSteps(launcher.nats_url, sid)
    stored_steps.start()
    assert stored_steps.watching.wait(30), "watching the session's step events"
    env.reset(seed=0)
    with Stepper(env) as stepper:
        stepper.steps_after(40)
        old = launcher.kill_service("envhost")
        wait_for(lambda: stepper.error is not None, timeout=30, what="the session's step to fail")
    assert isinstance(stepper.error, platform_sdk.PlatformError), repr(stepper.error)
    reply = wait_for(lambda: (r := httpx.post(f"{launcher.url}/v0/sessions/{sid}/step",
                                              json={"action": 0}, timeout=10)).status_code == 410 and r,
                     timeout=30, what="a 410 for the env host's session")
    assert reply.json()["code"] == "gone" and reply.json()["detail"], reply.json()
    assert not instance_pids(sid)
    env.close()

    # No env host is left to publish the session's end: the broker's CRASHED ends its recording.
    session = httpx.get(f"{launcher.url}/v0/sessions/{sid}", timeout=10).json()
    assert session["state"] == "crashed" and "no heartbeat" in session["reason"], session
    recording = ended_recording(launcher.url, sid, "crashed")
    assert recording["reason"] == session["reason"], recording
    stored = stored_steps.stop()
    answered = 1 + len(stepper.actions)  # the first reset, then each step or reset answered
    if durable:  # each answer came after its event was stored: none is lost
        assert answered <= stored <= answered + 1, (stored, answered)
    else:  # the last ones (up to ~50 ms of steps) may have died unpublished
        assert 20 < stored <= answered + 1, (stored, answered)
    assert recording["last_seq"] == stored and not recording["missing_seqs"], "every stored step recorded"
    assert recorded_seqs(launcher.url, recording) == list(range(1, stored + 1)), "each event once, in order"
    assert "published_last_seq" not in recording, "what the dead env host published is unknown"
    assert recording["tail_may_be_missing"] is not durable, "the recording says whether answered steps may be lost"
    launcher.wait_restarted("envhost", old)
    assert wait_for(lambda: created(launcher.url), timeout=BACK_S, what="a new session on the env host started again")
    with platform_sdk.connect("cartpole", url=launcher.url) as fresh:
        fresh.reset(seed=0)
        fresh.step(1)


def test_a_service_that_keeps_crashing_stops_the_platform_with_its_last_lines(tmp_path: Path) -> None:
    # A bad setting the broker reads at start: every start of it fails at once. The launcher's
    # own start limit is raised past the five crashes' time on a loaded machine (each start of
    # the broker takes seconds of imports), so that the crash loop, not the limit, ends it.
    launcher = Launcher(tmp_path, PLATFORM_POOLS="cartpole=many", PLATFORM_LAUNCH_TIMEOUT="300")
    try:
        assert launcher.process.wait(240) == 1
    finally:
        launcher.stop()
    stderr = "\n".join(launcher.stderr)
    assert stderr.count("broker exited with status 1; starting it again") == 4, stderr
    last = stderr.split("broker crashed 5 times within 60 s: stopping the platform.")
    assert len(last) == 2, stderr
    assert "PLATFORM_POOLS" in last[1], "the broker's own last lines say why"
    assert launcher.service_pid("gateway") is None and not descendants(launcher.process.pid)


def test_a_killed_launcher_leaves_no_process_behind(tmp_path: Path) -> None:
    launcher = Launcher(tmp_path)
    try:
        launcher.wait_started()
        env = platform_sdk.connect("cartpole", url=launcher.url)  # not closed: the platform goes away
        env.reset(seed=0)
        env.step(1)
        tree = descendants(launcher.process.pid)
        assert instance_pids(env.session_id) and set(instance_pids(env.session_id)) <= set(tree)
        assert len(tree) >= 6, tree  # nats, four services, the session's instance
        launcher.process.kill()
        launcher.process.wait(10)
        wait_for(lambda: not [pid for pid in tree if pid_alive(pid)], timeout=60,
                 what="every process of the platform to end")
    finally:
        launcher.stop()
