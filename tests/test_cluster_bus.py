"""The platform across network namespaces (tests/cluster): a NATS cluster of three with the
sessions stream stored on all three, two env hosts, the broker, the gateway and two recorders
each on a machine of its own, PostgreSQL and S3 in the root namespace. The faults: one NATS
server killed, one recorder killed (the other takes its partitions and finishes its
recordings), the broker and the gateway restarted."""

from __future__ import annotations

import json
import signal
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator

import numpy as np
import platform_sdk
import pytest
from cluster.clients import (assert_running_and_stepping, closed_recording, heartbeats, partition_holders, recorded_actions,
                             session, stream_servers)
from cluster.platform import NATS_SERVERS, RECORDER_LEASE_S, ClusterPlatform, monitor_url
from platform_contracts import subjects
from platform_testing.waiting import wait_for

pytestmark = pytest.mark.timeout(600)
FENCE_AND_WINDOW_S = 15.0  # more than an env host's fence (7 s) and the broker's live window (10 s)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterPlatform]:
    with ClusterPlatform(tmp_path_factory.mktemp("cluster"), {"envhost-a": 4, "envhost-b": 4}) as platform:
        heartbeats(platform, [platform.envhost_id(name) for name in platform.envhosts])
        yield platform


def _server_of(cluster: ClusterPlatform, client_name: str) -> str:
    """The NATS server the client named `client_name` is connected to (its /connz)."""
    for name in NATS_SERVERS:
        with urllib.request.urlopen(f"{monitor_url(cluster, name)}/connz?limit=1024", timeout=5) as answer:
            if any(c.get("name") == client_name for c in json.load(answer).get("connections", [])):
                return name
    raise AssertionError(f"no NATS server has a connection named {client_name}")


def _stream_in_step_on_all_three(cluster: ClusterPlatform) -> bool:
    replicas, servers = stream_servers(cluster)
    return replicas == 3 and sorted(servers) == sorted(NATS_SERVERS) and all(servers.values())


def test_the_sessions_stream_is_stored_on_all_three_servers(cluster: ClusterPlatform) -> None:
    wait_for(lambda: _stream_in_step_on_all_three(cluster), what="the sessions stream on all three servers")


class RecordedStepper:
    """One recorded CartPole session stepped with random actions, keeping each episode's actions."""

    def __init__(self, cluster: ClusterPlatform, seed: int) -> None:
        self.env = platform_sdk.connect("cartpole", url=cluster.url, record=True)
        self.rng = np.random.default_rng(seed)
        self.episodes: list[list[int]] = []
        self.ended = True

    def step(self, steps: int) -> None:
        for _ in range(steps):
            if self.ended:
                self.env.reset(seed=len(self.episodes))
                self.episodes.append([])
            action = int(self.rng.integers(0, 2))
            _, _, terminated, truncated, _ = self.env.step(action)
            self.episodes[-1].append(action)
            self.ended = terminated or truncated


def test_killing_one_nats_server_loses_no_step_and_no_recording(cluster: ClusterPlatform) -> None:
    stepper = RecordedStepper(cluster, 7)
    with stepper.env as env:
        assert env.step_path == "direct"
        host = next(name for name in cluster.envhosts if cluster.envhost_id(name) == env.session["host_id"])
        stepper.step(200)
        victim = _server_of(cluster, f"envhost-{cluster.envhost_id(host)}")  # the env host's server
        cluster.kill(victim)
        # The env host reconnects to another server meanwhile; the session outlives the env
        # host's fence and the broker's live window (nothing takes the failover for a lost host).
        until = time.monotonic() + FENCE_AND_WINDOW_S
        while time.monotonic() < until:
            stepper.step(20)
            time.sleep(0.05)
        assert session(cluster, env.session_id)["state"] == "running"
        sid = env.session_id
    store, meta = closed_recording(cluster, sid)
    episodes = stepper.episodes  # what the client stepped, by episode
    assert recorded_actions(store, meta) == episodes
    assert meta.last_seq == sum(map(len, episodes)) + len(episodes)  # a reset and its steps each
    cluster.check()  # no service died: they carried on through the other two servers
    with platform_sdk.connect("cartpole", url=cluster.url) as env:  # and a new session works
        env.reset(seed=1)
        assert env.step(0)[1] == 1.0
    cluster.start_service(victim)
    wait_for(lambda: _stream_in_step_on_all_three(cluster), timeout=60,
             what=f"{victim}, started again, to catch up with the sessions stream")


def _shared_by_both(cluster: ClusterPlatform) -> dict[int, str] | None:
    """Every partition held, half by each recorder; else None."""
    holders = partition_holders(cluster)
    share = subjects.SESSION_PARTITIONS // len(cluster.recorders)
    counts = Counter(holders.values())
    return holders if len(holders) == subjects.SESSION_PARTITIONS and set(counts.values()) == {share} \
        and set(counts) == set(cluster.recorders) else None


def _all_held_by(cluster: ClusterPlatform, recorder: str) -> bool:
    """Every partition held, all by `recorder`."""
    holders = partition_holders(cluster)
    return len(holders) == subjects.SESSION_PARTITIONS and set(holders.values()) == {recorder}


def test_killing_one_recorder_hands_its_recordings_to_the_other(cluster: ClusterPlatform) -> None:
    holders = wait_for(lambda: _shared_by_both(cluster), timeout=60, what="both recorders holding half the partitions")
    steppers = [RecordedStepper(cluster, seed) for seed in range(6)]
    try:
        for stepper in steppers:
            stepper.step(150)
        first = steppers[0].env.session_id
        victim = holders[subjects.session_partition(first)]
        survivor = next(name for name in cluster.recorders if name != victim)
        orphaned = [s.env.session_id for s in steppers if holders[subjects.session_partition(s.env.session_id)] == victim]
        cluster.kill(victim)
        # steps go on while the dead recorder's leases run out and the survivor takes them over
        until = time.monotonic() + 2 * RECORDER_LEASE_S
        while time.monotonic() < until:
            for stepper in steppers:
                stepper.step(10)
        wait_for(lambda: _all_held_by(cluster, survivor), timeout=30, what=f"{survivor} holding every partition after {victim} was killed")
        for stepper in steppers:
            stepper.step(50)
    finally:
        for stepper in steppers:
            stepper.env.close()
    for stepper in steppers:
        store, meta = closed_recording(cluster, stepper.env.session_id)
        assert recorded_actions(store, meta) == stepper.episodes, f"session {stepper.env.session_id}"
        assert meta.last_seq == sum(map(len, stepper.episodes)) + len(stepper.episodes)
        assert meta.published_last_seq == meta.last_seq
    assert orphaned and first in orphaned  # the handover was exercised: these were the dead one's
    assert f"takes partition {subjects.session_partition(first)}" in cluster.log(survivor)
    cluster.start_service(victim)  # and it comes back to take its share again
    wait_for(lambda: _shared_by_both(cluster), timeout=60, what=f"{victim}, started again, taking its share")
    cluster.check()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "term"])
def test_the_broker_and_the_gateway_restart_without_ending_a_session(cluster: ClusterPlatform, sig: int) -> None:
    envs = [platform_sdk.connect("cartpole", url=cluster.url) for _ in range(3)]
    try:
        for env in envs:
            env.reset(seed=0)
            env.step(0)
        cluster.kill("broker", sig)
        cluster.kill("gateway", sig)
        for env in envs:  # the direct path needs neither while the link stays open
            env.step(1)
        cluster.start_service("broker", wait=False)
        cluster.start_service("gateway")
        assert_running_and_stepping(cluster, envs, seed=1)
    finally:
        for env in envs:
            env.close()
    cluster.check()
