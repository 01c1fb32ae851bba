"""The chart's observability parts, rendered by the real helm: the ServiceMonitor (off by
default; on, it scrapes the gateway Service's `http` port at /metrics with the bearer token of
the Secret the gateway reads PLATFORM_METRICS_TOKEN from), checked against the Prometheus
Operator's own CRD schema (kubernetes-validate holds no schema for it); and the dashboards as
ConfigMaps for Grafana's sidecar (off by default; on, one per generated dashboard, its JSON
the generator's, labelled grafana_dashboard: "1")."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from chart_render import FULLNAME, NAMESPACE, Manifest, deployment, env_of, helm_run, of_kind, one, render
from helm_tool import CHART

OBSERVABILITY_VALUES = CHART / "ci" / "observability-values.yaml"
SERVICE_MONITOR_CRD = Path(__file__).parent / "crds" / "monitoring.coreos.com_servicemonitors.yaml"
DASHBOARDS = Path(__file__).resolve().parents[2] / "deploy" / "grafana"


def strict(schema: Any) -> Any:
    """The CRD's schema refusing unknown fields where it lists its fields (what the API server's
    strict field validation does), so a misspelt key fails here rather than being pruned."""
    if isinstance(schema, dict):
        schema = {key: strict(value) for key, value in schema.items()}
        if ("properties" in schema and "additionalProperties" not in schema
                and not schema.get("x-kubernetes-preserve-unknown-fields")):
            schema["additionalProperties"] = False
        return schema
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    return schema


def service_monitor_schema() -> dict[str, Any]:
    crd = yaml.safe_load(SERVICE_MONITOR_CRD.read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    schema: dict[str, Any] = strict(version["schema"]["openAPIV3Schema"])
    return schema


@pytest.fixture(scope="module")
def observed(helm: Path) -> list[Manifest]:
    return render(helm, CHART, "--values", str(OBSERVABILITY_VALUES))


def test_both_are_off_by_default(helm: Path) -> None:
    manifests = render(helm, CHART)
    assert not of_kind(manifests, "ServiceMonitor")
    assert not [m for m in of_kind(manifests, "ConfigMap") if "grafana_dashboard" in m["metadata"].get("labels", {})]


def test_the_service_monitor_passes_the_operators_crd_schema(observed: list[Manifest]) -> None:
    monitor = one(observed, "ServiceMonitor", FULLNAME)
    schema = service_monitor_schema()
    jsonschema.validate(monitor, schema)
    wrong = copy.deepcopy(monitor)
    wrong["spec"]["endpoints"][0]["bearerTokenSecrett"] = {"name": "x", "key": "y"}
    with pytest.raises(jsonschema.ValidationError, match="bearerTokenSecrett"):
        jsonschema.validate(wrong, schema)


def test_the_service_monitor_scrapes_the_gateway_with_its_metrics_token(observed: list[Manifest]) -> None:
    monitor = one(observed, "ServiceMonitor", FULLNAME)
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["namespace"] == NAMESPACE
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    service = one(observed, "Service", f"{FULLNAME}-gateway")
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= service["metadata"]["labels"].items(), "the ServiceMonitor selects no gateway Service"
    assert [m for m in of_kind(observed, "Service") if selector.items() <= m["metadata"]["labels"].items()] == [service]
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] in {port["name"] for port in service["spec"]["ports"]}
    assert endpoint["path"] == "/metrics" and endpoint["interval"] == "30s"
    token = env_of(deployment(observed, "gateway"))["PLATFORM_METRICS_TOKEN"]
    assert token == ("secret", "platform-metrics", "token")
    assert endpoint["authorization"] == {"type": "Bearer", "credentials": {"name": token[1], "key": token[2]}}


def test_the_service_monitor_sends_no_token_when_none_is_set(helm: Path) -> None:
    manifests = render(helm, CHART, "--set", "metrics.serviceMonitor.enabled=true")
    (endpoint,) = one(manifests, "ServiceMonitor", FULLNAME)["spec"]["endpoints"]
    assert endpoint == {"port": "http", "path": "/metrics", "interval": "30s"}
    assert "PLATFORM_METRICS_TOKEN" not in env_of(deployment(manifests, "gateway"))
    jsonschema.validate(one(manifests, "ServiceMonitor", FULLNAME), service_monitor_schema())


def test_the_dashboards_are_configmaps_for_grafanas_sidecar(observed: list[Manifest]) -> None:
    maps = [m for m in of_kind(observed, "ConfigMap") if m["metadata"]["labels"].get("grafana_dashboard") == "1"]
    generated = {path.name: path.read_text() for path in DASHBOARDS.glob("*.json")}
    assert len(generated) == 2
    found: dict[str, str] = {}
    for config_map in maps:
        assert config_map["metadata"]["namespace"] == NAMESPACE
        assert config_map["metadata"]["annotations"] == {"grafana_folder": "Simulusion"}
        ((name, text),) = config_map["data"].items()
        found[name] = text
        uid = json.loads(text)["uid"]
        assert config_map["metadata"]["name"] == f"{FULLNAME}-dashboard-{uid.removeprefix('simulusion-')}"
    assert found.keys() == generated.keys()
    for name, text in generated.items():
        assert found[name] == text.rstrip("\n"), f"the chart's {name} is not deploy/grafana's: run make gen"


def test_the_sidecars_label_can_be_changed_and_a_typo_fails(helm: Path) -> None:
    manifests = render(helm, CHART, "--set", "metrics.dashboards.enabled=true",
                       "--set", "metrics.dashboards.labels.grafana_dashboard=null",
                       "--set", "metrics.dashboards.labels.dashboards=simulusion")
    maps = [m for m in of_kind(manifests, "ConfigMap") if m["metadata"]["labels"].get("dashboards") == "simulusion"]
    assert len(maps) == 2 and all("grafana_dashboard" not in m["metadata"]["labels"] for m in maps)
    done = helm_run(helm, "template", "platform", str(CHART), "--set", "metrics.dashboard.enabled=true")
    assert done.returncode != 0 and "additional properties 'dashboard' not allowed" in done.stderr, done.stderr
