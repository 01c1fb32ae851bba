"""The sessions stream's limit (PLATFORM_JETSTREAM_MAX_BYTES) on the whole platform: the recorder
deletes the step events it has written, so the stream holds only its backlog; with the recorder
stopped, a recorded vector run fills the stream, then its steps wait (the env host says why in
its log, its metric and the session's `stream_full_since`) and nothing is dropped; once the recorder is back, the steps go on and
every one is recorded, once."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import nats
import numpy as np
import platform_sdk
from platform_contracts import subjects
from platform_contracts.streams import MIN_MAX_BYTES
from platform_sdk.recordings import EpisodeFolder
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.waiting import wait_for
from prometheus_client.parser import text_string_to_metric_families

LIMIT = MIN_MAX_BYTES
NUM_ENVS = 16
TOKEN = "metrics-token-stream-limit-0123456789"


def _stream_state(stack: PlatformStack) -> tuple[int, int]:
    """The sessions stream's (bytes held, limit)."""

    async def ask() -> tuple[int, int]:
        nc = await nats.connect(stack.nats_url)
        try:
            info = await nc.jetstream().stream_info(subjects.SESSIONS_STREAM)
        finally:
            await nc.close()
        return int(info.state.bytes), int(info.config.max_bytes or -1)

    return asyncio.run(ask())


def _where_it_differs(folder: Path, recording: EpisodeFolder, seqs: list[int]) -> str:
    """What a recording's episodes hold around the first seq out of place: the entries there and
    the files in its folder (a failure must say enough to find its cause)."""
    wrong = next((i for i, seq in enumerate(seqs) if seq != i + 1), len(seqs))
    entries = [e for e in recording.episodes if e["first_seq"] <= wrong + 40 and e["last_seq"] >= wrong - 40]
    files = sorted(p.name for p in folder.iterdir() if not p.name.endswith(".npz"))
    npz = sorted(p.name for p in folder.glob("*.npz"))
    listed = {e["file"] for e in recording.episodes}
    return (f"{folder.name}: {len(seqs)} events recorded; the first out of place at index {wrong} "
            f"({seqs[wrong - 2: wrong + 2]}); the entries around it: {entries}; other files: {files}; "
            f"{len(npz)} npz files, unlisted: {sorted(set(npz) - listed)}; meta: "
            f"{ {k: recording.meta.get(k) for k in ('last_seq', 'missing_seqs', 'orphan_seqs', 'published_last_seq')} }")


def _session(stack: PlatformStack, session_id: str) -> dict[str, Any]:
    answer = httpx.get(f"{stack.url}/v0/sessions/{session_id}", timeout=30)
    answer.raise_for_status()
    return dict(answer.json())


def _refusals(stack: PlatformStack) -> float:
    body = httpx.get(f"{stack.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30).text
    return sum(sample.value for family in text_string_to_metric_families(body) for sample in family.samples
               if sample.name == "simulusion_envhost_stream_full_refusals_total")


class Stepper(threading.Thread):
    """Steps a vector session flat out until stopped; `steps` counts its vector steps."""

    def __init__(self, envs: Any) -> None:
        super().__init__(daemon=True)
        self.envs = envs
        self.steps = 0
        self.error: BaseException | None = None
        self.stopping = threading.Event()

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                self.envs.step(np.ones(NUM_ENVS, dtype=np.int64) * (self.steps % 2))
                self.steps += 1
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc

    def stalled(self, seconds: float = 1.5) -> bool:
        before = self.steps
        self.stopping.wait(seconds)
        return self.steps == before


def test_a_full_stream_makes_steps_wait_and_loses_nothing(tmp_path: Path) -> None:
    extra = {"PLATFORM_JETSTREAM_MAX_BYTES": str(LIMIT), "PLATFORM_METRICS_TOKEN": TOKEN}
    with running_platform(tmp_path / "platform", extra_env=extra) as stack:
        assert _stream_state(stack)[1] == LIMIT, "the stream has the setting's limit"
        stack.kill("recorder")
        envs = platform_sdk.make_vec("cartpole", NUM_ENVS, url=stack.url, record=True)
        sid = envs.session_id
        envs.reset(seed=0)
        stepper = Stepper(envs)
        stepper.start()
        try:
            wait_for(lambda: "the sessions stream is full" in stack.log("envhost"), timeout=180,
                     what="the env host to say the stream is full")
            wait_for(lambda: stepper.error is None and stepper.stalled(), timeout=120,
                     what="the steps to wait for the recorder (the env host's backlog full)")
            held, limit = _stream_state(stack)
            assert LIMIT - 256 * 1024 < held <= limit, (held, limit)
            assert _refusals(stack) > 0
            full_since = wait_for(lambda: _session(stack, sid)["stream_full_since"], timeout=30,
                                  what="the session to say its host's events wait for a full stream")
            assert time.time() - 300 < full_since <= time.time()
            waited_at = stepper.steps

            stack.start_service("recorder")
            wait_for(lambda: stepper.steps > waited_at + 200, timeout=120,
                     what="the steps to go on once the recorder catches up")
            assert "the recorder has caught up" in stack.log("envhost")
        finally:
            stepper.stopping.set()
            stepper.join(60)
        assert stepper.error is None, repr(stepper.error)
        # (stepping flat out, the stream may fill again: the recorder is slower than this run)
        # the recorder first writes the stream's backlog (its whole limit): minutes on a loaded machine
        wait_for(lambda: _session(stack, sid)["stream_full_since"] is None, timeout=240,
                 what="the session to say events flow again once its steps stop")
        envs.close()

        taken = stepper.steps
        for index in range(NUM_ENVS):
            folder = Path(stack.recordings) / f"{sid}-{index}"

            def closed(folder: Path = folder) -> EpisodeFolder | None:
                found = EpisodeFolder(folder) if (folder / "meta.json").exists() else None
                return found if found is not None and found.meta.get("status") == "closed" else None

            recording = wait_for(closed, timeout=120, what=f"recording {folder.name} to be closed")
            meta = recording.meta
            # one event a vector step (a step, or the reset of an autoreset) after the first reset
            assert meta["last_seq"] == taken + 1 and not meta["missing_seqs"], (folder.name, meta["last_seq"], taken)
            seqs: list[int] = []
            for entry in recording.episodes:
                seqs += [entry["first_seq"], *np.load(folder / entry["file"])["seq"].tolist()]
            assert seqs == list(range(1, taken + 2)), _where_it_differs(folder, recording, seqs)
        wait_for(lambda: _stream_state(stack)[0] < LIMIT // 4, timeout=30,
                 what="the written step events to be deleted from the stream")
