"""The platform across network namespaces (tests/cluster), its env hosts: sessions placed across
two env hosts by free capacity, GPU entries only on the one offering a GPU, one env host killed,
one env host's network cut for 30 s."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import platform_sdk
import pytest
from cluster.clients import assert_running_and_stepping, heartbeats, rest_step, session, wait_idle, wait_state
from cluster.platform import ClusterPlatform
from platform_testing.waiting import instance_pids, wait_for

pytestmark = pytest.mark.timeout(600)
CAPACITY = {"envhost-a": 3, "envhost-b": 2}
GPUS = {"envhost-b": 1}
CATALOG = """
[envs.cartpole-gpu]
gymnasium_id = "CartPole-v1"
description = "CartPole, placed as if it needed a GPU (the local launcher gives it none)"
gpus = 1
"""
CUT_S = 30.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterPlatform]:
    with ClusterPlatform(tmp_path_factory.mktemp("cluster"), CAPACITY, GPUS, CATALOG,
                         recorders=1) as platform:  # these tests record nothing
        heartbeats(platform, [platform.envhost_id(name) for name in platform.envhosts])
        yield platform


def _host(cluster: ClusterPlatform, env: platform_sdk.RemoteEnv) -> str:
    """The env host (its machine's name) holding `env`'s session."""
    return next(name for name in cluster.envhosts if cluster.envhost_id(name) == env.session["host_id"])


def _step_many(envs: list[platform_sdk.RemoteEnv], steps: int = 5) -> None:
    for env in envs:
        env.reset(seed=0)
        for _ in range(steps):
            env.step(0)


def test_sessions_go_to_the_host_with_the_most_free_capacity(cluster: ClusterPlatform) -> None:
    wait_idle(cluster)
    envs: list[platform_sdk.RemoteEnv] = []
    try:
        for _ in range(sum(CAPACITY.values())):
            envs.append(platform_sdk.connect("cartpole", url=cluster.url))
        # most free first, ties to the lowest id: a (3 free), a (2, 2), b (1, 2), a (1, 1), b (0, 1)
        assert [_host(cluster, env) for env in envs] == ["envhost-a", "envhost-a", "envhost-b", "envhost-a", "envhost-b"]
        for env in envs:  # each steps directly to its host, at the address the host advertises
            assert env.step_path == "direct"
            ticket = httpx.post(f"{cluster.url}/v0/sessions/{env.session_id}/ticket", timeout=30).json()
            assert ticket["address"] == cluster.step_address(_host(cluster, env))
        _step_many(envs)
        with pytest.raises(platform_sdk.PlatformError) as full:
            platform_sdk.connect("cartpole", url=cluster.url)
        assert "capacity" in str(full.value).lower() or "no env host" in str(full.value).lower(), str(full.value)
    finally:
        for env in envs:
            env.close()


def test_gpu_entries_go_only_to_the_host_offering_gpus(cluster: ClusterPlatform) -> None:
    wait_idle(cluster)
    envs: list[platform_sdk.RemoteEnv] = []
    try:
        for _ in range(CAPACITY["envhost-b"]):  # to b, though a has more room
            envs.append(platform_sdk.connect("cartpole-gpu", url=cluster.url))
        assert [_host(cluster, env) for env in envs] == ["envhost-b"] * CAPACITY["envhost-b"]
        with pytest.raises(platform_sdk.PlatformError) as full:
            platform_sdk.connect("cartpole-gpu", url=cluster.url)
        assert "all 1 live env hosts with 1 GPU(s) are full" in str(full.value), str(full.value)
        envs.append(platform_sdk.connect("cartpole", url=cluster.url))  # the others still go to a
        assert _host(cluster, envs[-1]) == "envhost-a"
        _step_many(envs)
    finally:
        for env in envs:
            env.close()


def test_killing_one_env_host_ends_only_its_sessions(cluster: ClusterPlatform) -> None:
    wait_idle(cluster)
    envs = [platform_sdk.connect("cartpole", url=cluster.url) for _ in range(4)]  # a, a, b, a
    try:
        on_b = [env for env in envs if _host(cluster, env) == "envhost-b"]
        on_a = [env for env in envs if _host(cluster, env) == "envhost-a"]
        assert on_b and on_a
        _step_many(envs)
        cluster.kill("envhost-b")
        reason = f"its env host {cluster.envhost_id('envhost-b')} stopped"
        deadline = time.monotonic() + 60
        answer = rest_step(cluster, on_b[0].session_id)
        while answer.status_code != 410 and time.monotonic() < deadline:
            for env in on_a:  # the other host's sessions keep stepping all along
                env.step(1)
            time.sleep(0.5)
            answer = rest_step(cluster, on_b[0].session_id)
        assert answer.status_code == 410, answer.text
        assert reason in answer.text, answer.text
        with pytest.raises(platform_sdk.PlatformError):
            on_b[0].step(0)
        assert_running_and_stepping(cluster, on_a, seed=2)
    finally:
        for env in envs:
            env.close()
        cluster.start_service("envhost-b")
        heartbeats(cluster, [cluster.envhost_id("envhost-b")])


def test_a_host_cut_off_for_30_s_resumes_or_ends_its_sessions_never_both(cluster: ClusterPlatform) -> None:
    wait_idle(cluster)
    envs = [platform_sdk.connect("cartpole", url=cluster.url) for _ in range(3)]  # a, a, b
    try:
        cut = next(env for env in envs if _host(cluster, env) == "envhost-b")
        others = [env for env in envs if env is not cut]
        _step_many(envs)
        outcome: dict[str, object] = {}

        def step_through_the_cut() -> None:
            try:
                outcome["answer"] = cut.step(1)  # blocks while the link is down
                outcome["at"] = time.monotonic()
            except platform_sdk.PlatformError as exc:
                outcome["error"] = exc

        cluster.network.cut("envhost-b")
        stepper = threading.Thread(target=step_through_the_cut, daemon=True)
        try:
            time.sleep(0.5)
            stepper.start()
            cut_until = time.monotonic() + CUT_S
            while time.monotonic() < cut_until:
                for env in others:
                    env.step(0)
                time.sleep(0.5)
        finally:
            cluster.network.restore("envhost-b")
        stepper.join(120)
        assert not stepper.is_alive(), "the step sent into the cut never returned"
        heartbeats(cluster, [cluster.envhost_id("envhost-b")])
        time.sleep(5)  # the broker and the host have heard each other again
        state = session(cluster, cut.session_id)
        if state["state"] == "running":  # resumed: it steps, on its host
            assert "answer" in outcome, outcome
            cut.reset(seed=3)
            assert cut.step(0)[1] == 1.0
        else:  # ended: the host no longer runs it, and no step of it is answered after its end
            assert state["state"] in ("crashed", "closed"), state
            assert "answer" not in outcome, f"session {cut.session_id} is {state['state']} yet stepped: {outcome}"
            wait_for(lambda: not instance_pids(cut.session_id), timeout=30,
                     what=f"the instance of the ended session {cut.session_id} to stop on its host")
            assert rest_step(cluster, cut.session_id).status_code == 410
            with pytest.raises(platform_sdk.PlatformError):
                cut.step(0)
        for env in others:  # the other host's sessions stepped through it all
            assert wait_state(cluster, env.session_id, {"running"})["state"] == "running"
            env.reset(seed=4)
            assert env.step(0)[1] == 1.0
    finally:
        for env in envs:
            env.close()
