"""Two recorders share the session partitions (platform_recorder.partitions) on the whole
platform: a second recorder started beside the platform's own takes half of the partitions;
recorded sessions step in both halves; the platform's recorder is SIGKILLed mid-run and the
second takes its partitions once their leases expire, finishing what the dead one left in the
part files; every step of every session is recorded exactly once, in order."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import platform_sdk
from platform_contracts import subjects
from platform_sdk.recordings import EpisodeFolder
from platform_testing.platform import PlatformStack, clean_env, running_platform
from platform_testing.waiting import wait_for

SESSIONS = 8
LEASE_S = "5"
# platform_recorder.partitions' log lines: a partition taken, and one released or lost
TAKES = re.compile(r"takes partition (\d+)$")
LETS_GO = re.compile(r"releasing partition (\d+)$|partition (\d+) was taken over")


class SecondRecorder:
    """`python -m platform_recorder` beside the platform's, on its NATS and recordings."""

    def __init__(self, stack: PlatformStack, log_path: Path) -> None:
        env = {**clean_env(), "PLATFORM_NATS_URL": stack.nats_url, "PLATFORM_RECORDINGS": str(stack.recordings),
               "PLATFORM_RECORDER_ID": "second", "PLATFORM_RECORDER_LEASE_S": LEASE_S}
        self.log_path = log_path
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "platform_recorder"], env=env, stdout=log,
                                            stderr=log)

    def log(self) -> str:
        return self.log_path.read_text()

    def held(self) -> set[int]:
        """The partitions it took and did not release or lose since (from its log)."""
        held: set[int] = set()
        for line in self.log().splitlines():
            if taken := TAKES.search(line):
                held.add(int(taken.group(1)))
            elif gone := LETS_GO.search(line):
                held.discard(int(gone.group(1) or gone.group(2)))
        return held

    def stop(self) -> int | None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                return self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait(10)


class Stepper(threading.Thread):
    """Steps one recorded CartPole session until told to stop, resetting at each episode's end."""

    def __init__(self, env: platform_sdk.RemoteEnv) -> None:
        super().__init__(daemon=True)
        self.env, self.events, self.error = env, 0, None
        self.stopping = threading.Event()

    def run(self) -> None:
        try:
            self.env.reset(seed=0)
            self.events = 1
            while not self.stopping.is_set():
                _, _, terminated, truncated, _ = self.env.step(self.events % 2)
                self.events += 1
                if terminated or truncated:
                    self.env.reset()
                    self.events += 1
                time.sleep(0.002)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc


def _seqs(folder: Path) -> list[int]:
    seqs: list[int] = []
    for entry in EpisodeFolder(folder).episodes:
        seqs += [entry["first_seq"], *np.load(folder / entry["file"])["seq"].tolist()]
    return seqs


def test_a_killed_recorders_partitions_go_to_the_other_and_every_step_is_recorded_once(tmp_path: Path) -> None:
    with running_platform(tmp_path / "platform", extra_env={"PLATFORM_RECORDER_LEASE_S": LEASE_S}) as stack:
        second = SecondRecorder(stack, tmp_path / "second-recorder.log")
        try:
            wait_for(lambda: len(second.held()) == subjects.SESSION_PARTITIONS // 2, timeout=60,
                     what="the second recorder to take half of the partitions")
            assert "releasing partition" in stack.log("recorder")
            theirs = second.held()

            envs: list[platform_sdk.RemoteEnv] = []  # sessions in both halves (their ids decide)
            while len(envs) < SESSIONS or len({subjects.session_partition(e.session_id) in theirs for e in envs}) < 2:
                envs.append(platform_sdk.connect("cartpole", url=stack.url, record=True))
                assert len(envs) <= 3 * SESSIONS, "the broker's session ids all fall in one half of the partitions"
            partitions = {env.session_id: subjects.session_partition(env.session_id) for env in envs}
            steppers = [Stepper(env) for env in envs]
            for stepper in steppers:
                stepper.start()
            time.sleep(3)
            stack.kill("recorder")  # mid-run: the second takes its partitions once their leases expire
            wait_for(lambda: len(second.held()) == subjects.SESSION_PARTITIONS, timeout=60,
                     what="the second recorder to take the killed one's partitions")
            time.sleep(2)
            for stepper in steppers:
                stepper.stopping.set()
            for stepper in steppers:
                stepper.join(60)
                assert stepper.error is None, repr(stepper.error)
            for env in envs:
                env.close()

            for env, stepper in zip(envs, steppers, strict=True):
                folder = stack.recordings / env.session_id

                def closed(folder: Path = folder) -> EpisodeFolder | None:
                    found = EpisodeFolder(folder) if (folder / "meta.json").exists() else None
                    return found if found is not None and found.meta.get("status") == "closed" else None

                meta = wait_for(closed, timeout=90, what=f"recording {folder.name} closed").meta
                assert meta["last_seq"] == stepper.events and not meta["missing_seqs"], (folder.name, meta["last_seq"])
                assert _seqs(folder) == list(range(1, stepper.events + 1)), f"{folder.name}: every event once, in order"
            log = second.log()
            assert "Traceback" not in log and "GAP" not in log, log[-3000:]
            # both recorders wrote: the second its own half from the start, and the dead one's after it
            assert any(p in theirs for p in partitions.values()) and any(p not in theirs for p in partitions.values())
        finally:
            assert second.stop() == 0, second.log()[-3000:]
