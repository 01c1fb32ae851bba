"""Compose's `observability` profile (compose.yaml) and compose.observability.yaml, as Debian's
docker-compose reads them: an OpenTelemetry Collector, Jaeger, Prometheus scraping the gateway
with the generated metrics token, and Grafana provisioned with its data sources and the
generated dashboards; Prometheus' configuration checked by `promtool check config`, the
collector's pipelines against what it defines, the gateway's token wrapper run for real."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from settings_names import PLATFORM_SERVICES
from test_compose import DATA, OBSERVABILITY, ROOT, compose_config, port_mapping, services, volume_mount

CONFIG = ROOT / "deploy" / "observability"
COLLECTOR_CONFIG = CONFIG / "otel-collector.yaml"
PROMETHEUS_CONFIG = CONFIG / "prometheus.yml"
GRAFANA_DATASOURCES = CONFIG / "grafana" / "datasources.yaml"
GRAFANA_DASHBOARDS = CONFIG / "grafana" / "dashboards.yaml"
TOKEN_FILE = DATA / "metrics-token"


@pytest.fixture(scope="module")
def observed() -> dict[str, dict[str, Any]]:
    """The profile on, with the platform's side of it."""
    return services(compose_config("compose.yaml", "compose.observability.yaml", profiles=("observability",)))


def binds(service: dict[str, Any]) -> dict[str, tuple[Path, str]]:
    """A service's bind mounts: target -> (source, options)."""
    found = {}
    for volume in service.get("volumes", []):
        kind, source, target = volume_mount(volume, {})
        assert kind == "bind", volume
        options = volume.split(":")[2] if isinstance(volume, str) and volume.count(":") >= 2 else "rw"
        found[target] = (Path(source), options)
    return found


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text())
    return loaded


def test_the_profile_validates_and_holds_its_four_services(observed: dict[str, dict[str, Any]]) -> None:
    assert set(OBSERVABILITY) <= set(observed)
    images = {name: observed[name]["image"] for name in OBSERVABILITY}
    assert images == {"otel-collector": "otel/opentelemetry-collector:0.123.0", "jaeger": "jaegertracing/jaeger:2.5.0",
                      "prometheus": "prom/prometheus:v2.53.4", "grafana": "grafana/grafana:11.6.0"}
    for name in OBSERVABILITY:
        service = observed[name]
        assert service["profiles"] == ["observability"], name
        assert service["user"] == "10001:10001" and service["cap_drop"] == ["ALL"], name
        assert service["security_opt"] == ["no-new-privileges:true"] and service["restart"] == "unless-stopped"
    for name in ("prometheus", "grafana"):
        assert observed[name]["healthcheck"]["test"][:2] == ["CMD", "wget"], name
        assert observed[name]["depends_on"]["secrets"]["condition"] == "service_completed_successfully"
    ports = {name: sorted(port_mapping(port) for port in observed[name].get("ports", [])) for name in OBSERVABILITY}
    assert ports == {"otel-collector": [("127.0.0.1", 4317, 4317), ("127.0.0.1", 4318, 4318)], "jaeger": [],
                     "prometheus": [("127.0.0.1", 9090, 9090)], "grafana": [("127.0.0.1", 3000, 3000)]}
    moved = services(compose_config("compose.yaml", profiles=("observability",),
                                    env={"GRAFANA_PORT": "3300", "PROMETHEUS_PORT": "9191"}))
    assert [port_mapping(port) for port in moved["grafana"]["ports"]] == [("127.0.0.1", 3300, 3000)]
    assert [port_mapping(port) for port in moved["prometheus"]["ports"]] == [("127.0.0.1", 9191, 9090)]


def test_only_the_override_points_the_services_at_the_collector(observed: dict[str, dict[str, Any]]) -> None:
    plain = services(compose_config("compose.yaml", profiles=("observability",)))
    for name in PLATFORM_SERVICES:
        assert not [key for key in plain[name].get("environment", {}) if key.startswith("OTEL_")], name
        environment = observed[name]["environment"]
        assert environment["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector:4318", name
        assert environment["OTEL_EXPORTER_OTLP_PROTOCOL"] == "http/protobuf", name
        assert environment["PLATFORM_NATS_URL"] == plain[name]["environment"]["PLATFORM_NATS_URL"]  # merged, kept
    receiver = load(COLLECTOR_CONFIG)["receivers"]["otlp"]["protocols"]["http"]["endpoint"]
    assert receiver == "0.0.0.0:4318"


def test_grafana_is_provisioned_with_the_generated_dashboards(observed: dict[str, dict[str, Any]]) -> None:
    mounts = binds(observed["grafana"])
    provider = load(GRAFANA_DASHBOARDS)["providers"]
    assert [p["type"] for p in provider] == ["file"]
    folder = provider[0]["options"]["path"]
    assert mounts[folder] == (ROOT / "deploy" / "grafana", "ro")
    assert mounts["/etc/grafana/provisioning/dashboards/simulusion.yaml"] == (GRAFANA_DASHBOARDS, "ro")
    assert mounts["/etc/grafana/provisioning/datasources/simulusion.yaml"] == (GRAFANA_DATASOURCES, "ro")
    assert mounts["/var/lib/grafana"] == (DATA / "grafana", "rw")

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_dashboards
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    mounted = {path.name: path.read_text() for path in (ROOT / "deploy" / "grafana").iterdir()}
    assert mounted == gen_dashboards.rendered(), "deploy/grafana holds other files than the generated dashboards"
    home = observed["grafana"]["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert Path(home).parent == Path(folder) and Path(home).name in mounted


def test_grafanas_data_sources_are_the_profiles_prometheus_and_jaeger(observed: dict[str, dict[str, Any]]) -> None:
    sources = {source["type"]: source for source in load(GRAFANA_DATASOURCES)["datasources"]}
    assert set(sources) == {"prometheus", "jaeger"}
    assert sources["prometheus"]["isDefault"] is True
    for kind, port in (("prometheus", 9090), ("jaeger", 16686)):
        url = urlsplit(sources[kind]["url"])
        assert (url.hostname, url.port) == (kind, port)
        assert url.hostname in observed
    # what the dashboards' datasource variable picks: Prometheus data sources
    assert sources["prometheus"]["uid"] == "prometheus"


def test_prometheus_scrapes_the_gateway_with_the_generated_token(observed: dict[str, dict[str, Any]]) -> None:
    mounts = binds(observed["prometheus"])
    assert mounts["/etc/prometheus/prometheus.yml"] == (PROMETHEUS_CONFIG, "ro")
    (job,) = [job for job in load(PROMETHEUS_CONFIG)["scrape_configs"] if job["job_name"] == "simulusion"]
    assert job["metrics_path"] == "/metrics"
    assert job["authorization"]["type"] == "Bearer"
    assert mounts[job["authorization"]["credentials_file"]] == (TOKEN_FILE, "ro")
    assert mounts["/prometheus"] == (DATA / "prometheus", "rw")
    assert "--storage.tsdb.path=/prometheus" in observed["prometheus"]["command"]
    gateway_port = observed["gateway"]["environment"]["PLATFORM_PORT"]
    assert job["static_configs"] == [{"targets": [f"gateway:{gateway_port}"]}]


def test_promtool_accepts_the_prometheus_configuration(tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: scripts/install_system_deps.sh installs Debian's prometheus package"
    syntax = subprocess.run([promtool, "check", "config", "--syntax-only", str(PROMETHEUS_CONFIG)],
                            capture_output=True, text=True, timeout=60)
    assert syntax.returncode == 0, syntax.stdout + syntax.stderr
    # The whole check, the token file included: a copy whose token file exists here.
    token = tmp_path / "metrics-token"
    token.write_text("0123456789abcdef\n")
    config = load(PROMETHEUS_CONFIG)
    for job in config["scrape_configs"]:
        if "authorization" in job:
            job["authorization"]["credentials_file"] = str(token)
    copy = tmp_path / "prometheus.yml"
    copy.write_text(yaml.safe_dump(config))
    done = subprocess.run([promtool, "check", "config", str(copy)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout
    token.unlink()
    missing = subprocess.run([promtool, "check", "config", str(copy)], capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0, "promtool did not check the token file"


def test_the_collectors_pipelines_use_what_it_defines(observed: dict[str, dict[str, Any]]) -> None:
    config = load(COLLECTOR_CONFIG)
    assert binds(observed["otel-collector"]) == {"/etc/otelcol/config.yaml": (COLLECTOR_CONFIG, "ro")}
    assert observed["otel-collector"]["command"] == ["--config=/etc/otelcol/config.yaml"]
    pipelines = config["service"]["pipelines"]
    assert set(pipelines) == {"traces"}
    for name, pipeline in pipelines.items():
        for part in ("receivers", "processors", "exporters"):
            assert pipeline.get(part) or part == "processors", f"{name} has no {part}"
            for component in pipeline.get(part, []):
                assert component in config[part], f"pipeline {name}: {part[:-1]} {component} is not defined"
    assert set(config["service"]["extensions"]) <= set(config["extensions"])
    used = {component for pipeline in pipelines.values() for component in pipeline["exporters"]}
    assert used == set(config["exporters"]), "an exporter no pipeline uses"
    endpoint = config["exporters"]["otlp/jaeger"]["endpoint"]
    host, port = endpoint.rsplit(":", 1)
    assert host in observed and host == "jaeger" and port == "4317"  # Jaeger 2 takes OTLP over gRPC there
    assert config["processors"]["memory_limiter"]["limit_mib"] > 0


def test_the_gateways_command_reads_the_token_file(observed: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    """The override's wrapper run here, with a python that prints what it was given."""
    command = observed["gateway"]["command"]
    assert command[:2] == ["sh", "-c"] and command[2].endswith("exec python -m platform_gateway")
    assert binds(observed["gateway"])["/data"] == (DATA, "rw")
    (tmp_path / "metrics-token").write_text("a1b2c3\n")
    script = (command[2].replace("$$", "$")  # docker-compose config writes $ as $$
              .replace("/data/metrics-token", str(tmp_path / "metrics-token"))
              .replace("python -m platform_gateway",
                       f"{sys.executable} -c 'import os; print(repr(os.environ[\"PLATFORM_METRICS_TOKEN\"]))'"))
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout) == (0, "'a1b2c3'\n"), done.stderr
