"""The env pod and its Secret as manifests: security, resources, GPUs, where the kwargs and WADs
go, and the settings' one-line errors."""

from __future__ import annotations

import base64
import json

import pytest
from platform_envhost.pods.kube_settings import KubeSettings, own_namespace
from platform_envhost.pods.pod_manifests import (
    MAX_SECRET_BYTES,
    ManifestError,
    PodPlan,
    pod_manifest,
    pod_name,
    secret_manifest,
)
from platform_sdk.launch.instance_processes import LaunchSpec
from pydantic import ValidationError

SETTINGS = KubeSettings(namespace="envs", image="registry.example/simulusion-platform-envs:1.2",
                        node_selector='{"pool": "envs"}', tolerations='[{"key": "envs", "operator": "Exists"}]',
                        gpu_node_selector='{"accelerator": "nvidia"}',
                        gpu_tolerations='[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]',
                        image_pull_secrets="regcred, other")


def plan(**fields: object) -> PodPlan:
    spec = fields.pop("spec", LaunchSpec(gymnasium_id="CartPole-v1", kwargs={"secret_level": 7}, jpeg_quality=80))
    return PodPlan(spec=spec, name="env-s-1-abcd", envhost_id="eh-1", session_id="s-1", **fields)  # type: ignore[arg-type]


def test_a_catalog_pod_runs_the_environment_server_of_the_envs_image_restricted():
    pod = pod_manifest(plan(), SETTINGS)
    spec = pod["spec"]
    [container] = spec["containers"]
    assert container["image"] == "registry.example/simulusion-platform-envs:1.2"
    assert container["command"] == ["python"]
    assert container["args"] == ["-m", "platform_sdk", "--gym-id", "CartPole-v1", "--kwargs-file",
                                 "/run/simulusion/kwargs.json", "--jpeg-quality", "80", "--listen", "0.0.0.0:50051"]
    assert "secret_level" not in json.dumps(pod)  # no kwargs in the pod spec, args or env
    assert spec["restartPolicy"] == "Never" and spec["automountServiceAccountToken"] is False
    assert spec["securityContext"]["runAsNonRoot"] is True and spec["securityContext"]["runAsUser"] == 10001
    assert container["securityContext"] == {
        "runAsNonRoot": True, "runAsUser": 10001, "runAsGroup": 10001, "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}
    assert container["resources"] == {"requests": {"cpu": "500m", "memory": "512Mi"},
                                      "limits": {"cpu": "2", "memory": "2Gi"}}
    assert spec["nodeSelector"] == {"pool": "envs"}
    assert spec["tolerations"] == [{"key": "envs", "operator": "Exists"}]
    assert spec["imagePullSecrets"] == [{"name": "regcred"}, {"name": "other"}]
    assert pod["metadata"]["labels"] == {
        "app.kubernetes.io/name": "simulusion-platform", "app.kubernetes.io/component": "env-instance",
        "simulusion.dev/envhost": "eh-1", "simulusion.dev/session": "s-1"}
    assert pod["metadata"]["annotations"]["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "false"
    assert spec["volumes"] == [{"name": "instance-files", "secret": {"secretName": "env-s-1-abcd", "defaultMode": 0o440}}]


def test_the_pod_writes_its_log_lines_as_the_env_host_does(monkeypatch):
    monkeypatch.setenv("PLATFORM_LOG_FORMAT", "json")
    monkeypatch.setenv("PLATFORM_STEP_TICKET_SECRET", "not-for-pods")
    [container] = pod_manifest(plan(), SETTINGS)["spec"]["containers"]
    assert container["env"] == [{"name": "PYTHONUNBUFFERED", "value": "1"}, {"name": "PLATFORM_LOG_FORMAT", "value": "json"}]
    monkeypatch.delenv("PLATFORM_LOG_FORMAT")
    [container] = pod_manifest(plan(), SETTINGS)["spec"]["containers"]
    assert container["env"] == [{"name": "PYTHONUNBUFFERED", "value": "1"}]


def test_a_gpu_entry_asks_for_its_gpus_and_gpu_nodes():
    spec = pod_manifest(plan(gpus=2), SETTINGS)["spec"]
    assert spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "2"
    assert spec["nodeSelector"] == {"pool": "envs", "accelerator": "nvidia"}
    assert spec["tolerations"][-1] == {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def test_an_image_entry_runs_its_own_image_on_its_port():
    pod = pod_manifest(plan(spec=LaunchSpec(image="org/sim:2", kwargs={"level": 2})), SETTINGS)
    [container] = pod["spec"]["containers"]
    assert container["image"] == "org/sim:2" and "command" not in container
    assert container["args"] == ["--kwargs-file", "/run/simulusion/kwargs.json"]
    assert container["ports"][0]["containerPort"] == 50051


def test_a_warm_pool_pod_is_labelled_by_its_pool():
    pod = pod_manifest(PodPlan(spec=LaunchSpec(gymnasium_id="CartPole-v1"), name="p", envhost_id="eh-1",
                               pool_env="cartpole", slot="pool-cartpole-1"), SETTINGS)
    labels = pod["metadata"]["labels"]
    assert labels["simulusion.dev/pool"] == "cartpole" and labels["simulusion.dev/state"] == "warm"
    assert "simulusion.dev/session" not in labels


def test_the_secret_holds_the_kwargs_and_wads_and_is_owned_by_the_pod():
    secret = secret_manifest(plan(files={"wad-1.wad": b"PWAD"}), "envs", {"name": "env-s-1-abcd", "uid": "u-1"})
    assert secret["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "env-s-1-abcd",
                                                       "uid": "u-1"}]
    assert json.loads(base64.b64decode(secret["data"]["kwargs.json"])) == {"secret_level": 7}
    assert base64.b64decode(secret["data"]["wad-1.wad"]) == b"PWAD"


def test_a_wad_too_large_for_a_secret_is_refused_naming_the_sizes():
    with pytest.raises(ManifestError) as info:
        secret_manifest(plan(files={"wad-big.wad": b"x" * MAX_SECRET_BYTES}), "envs", {"name": "p", "uid": "u"})
    assert "wad-big.wad 1024 KiB" in str(info.value) and "at most 1024 KiB" in str(info.value)
    assert "\n" not in str(info.value)


def test_pod_names_are_dns_labels():
    name = pod_name("pool-CartPole_v1-" + "x" * 80)
    assert name.startswith("env-pool-cartpole-v1-") and len(name) <= 63 and name == name.lower()


def test_no_envs_image_no_catalog_pod():
    with pytest.raises(ManifestError, match="PLATFORM_KUBE_IMAGE is not set"):
        pod_manifest(plan(), KubeSettings(namespace="envs"))


@pytest.mark.parametrize(("field", "value", "message"), [
    ("node_selector", "[1]", "must be a JSON object of strings"),
    ("tolerations", '{"key": "x"}', "must be a JSON list of tolerations"),
    ("gpu_tolerations", "not json", "is not valid JSON"),
    ("memory_limit", "2 GB", "must be a Kubernetes quantity"),
    ("image_pull_policy", "Sometimes", "must be one of Always, IfNotPresent, Never"),
    ("namespace", "Envs_1", "must be a Kubernetes name"),
])
def test_bad_settings_say_what_is_wrong(field, value, message):
    with pytest.raises(ValidationError, match=message):
        KubeSettings(**{field: value})


def test_the_default_namespace_is_the_service_accounts(tmp_path):
    path = tmp_path / "namespace"
    assert own_namespace(path) == "default"
    path.write_text("platform\n")
    assert own_namespace(path) == "platform"


def test_an_env_host_in_a_pod_owns_its_env_pods():
    pod = pod_manifest(plan(owner={"name": "envhost-0", "uid": "u-9"}), SETTINGS)
    assert pod["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "envhost-0",
                                                    "uid": "u-9"}]
    assert "ownerReferences" not in pod_manifest(plan(), SETTINGS)["metadata"]
