"""Claiming a warm pod under contention: two claimers read the same pod, both patch its labels
guarded by its resourceVersion, and the API server lets exactly one win (the other gets 409)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from platform_envhost.pods.kube_settings import KubeSettings
from platform_envhost.pods.pod_launcher import ClaimConflict, PodLauncher
from platform_envhost.pods.pod_manifests import PodPlan
from platform_sdk.launch.instance_processes import LaunchSpec
from platform_testing.kubernetes import KNOWN_IMAGE, KubernetesCluster


async def test_two_claimers_of_one_warm_pod_one_wins(kubernetes_cluster: KubernetesCluster, tmp_path: Path) -> None:
    settings = KubeSettings(api_url=kubernetes_cluster.url, namespace="envs", image=KNOWN_IMAGE)
    launcher = PodLauncher(settings, "eh-claims", tmp_path)
    rival = PodLauncher(settings, "eh-claims", tmp_path)  # another claimer, with its own watch of the same pods
    await launcher.start()
    await rival.start()
    try:
        warm = await launcher.launch(PodPlan(spec=LaunchSpec(gymnasium_id="CartPole-v1"), name="",
                                             envhost_id="eh-claims", pool_env="cartpole", slot="pool-cartpole-1"))
        await rival.watch.until(warm.name, lambda pod: pod is not None, 10)
        results = await asyncio.gather(launcher.claim(warm, "s-first"), rival.claim(warm, "s-second"),
                                       return_exceptions=True)
        assert sorted(type(result).__name__ for result in results) == ["ClaimConflict", "NoneType"], results
        [conflict] = [r for r in results if isinstance(r, ClaimConflict)]
        assert "409 Conflict" in str(conflict)
        [pod] = kubernetes_cluster.pods("envs", "simulusion.dev/state=claimed")
        winner = "s-first" if results[0] is None else "s-second"
        assert pod["metadata"]["labels"]["simulusion.dev/session"] == winner
        await warm.stop()
    finally:
        await rival.close()
        await launcher.close()
