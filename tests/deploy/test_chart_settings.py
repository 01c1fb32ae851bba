"""What the chart gives each service, read by that service's own settings class: every rendered
container's environment (secrets filled in, `$(VAR)` expanded as the kubelet does) must load
without an error, with the values the chart meant, and every PLATFORM_* variable the chart sets
must be one the service reads (a misspelt name would be silently ignored by the service)."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest
from chart_render import FULLNAME, SERVICES, Manifest, container, deployment, env_of, one, render
from helm_tool import CHART
from platform_broker.config import Settings as BrokerSettings
from platform_envhost.config import Settings as EnvhostSettings
from platform_gateway.config import Settings as GatewaySettings
from pydantic_settings import BaseSettings
from settings_names import read_by, settings_classes

POD_FIELDS = {"metadata.name": "platform-simulusion-platform-envhost-7d9f8-x2x4z", "status.podIP": "10.244.1.17"}
A_SECRET = "s3cr3t-0123456789abcdefghijklmnopqrstuvwxyzABCDEF"  # 48 characters, like the chart's
SECRET_VALUES = {"PLATFORM_DATABASE_URL": "postgresql+asyncpg://platform:pw@db.example:5432/platform"}


def container_environ(manifest: Manifest, generated: dict[tuple[str, str], str]) -> dict[str, str]:
    """The container's variables as the process sees them."""
    environ: dict[str, str] = {}
    for name, value in env_of(manifest).items():
        if isinstance(value, tuple) and value[0] == "secret":
            environ[name] = generated.get((value[1], value[2]), SECRET_VALUES.get(name, A_SECRET))
        elif isinstance(value, tuple):
            environ[name] = POD_FIELDS[value[1]]
        else:
            # Kubernetes expands $(NAME) of a variable defined above it in the list.
            environ[name] = re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: environ.get(m[1], m[0]), value)
    return environ


def generated_secrets(manifests: list[Manifest]) -> dict[tuple[str, str], str]:
    return {(m["metadata"]["name"], key): base64.b64decode(data).decode()
            for m in manifests if m["kind"] == "Secret" for key, data in m["data"].items()}


def load(settings_class: type[BaseSettings], environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    import os

    for name in [n for n in os.environ if n.startswith("PLATFORM_")]:
        monkeypatch.delenv(name)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return settings_class()


CI_VALUES = sorted((CHART / "ci").glob("*-values.yaml"))


@pytest.mark.parametrize("values", CI_VALUES, ids=lambda p: p.name)
def test_every_service_loads_its_settings_from_the_chart(helm: Path, values: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    manifests = render(helm, CHART, "--values", str(values))
    generated = generated_secrets(manifests)
    for service in SERVICES:
        workload = deployment(manifests, service)
        environ = container_environ(workload, generated)
        read = read_by(service)
        for settings_class in settings_classes(service):
            with monkeypatch.context() as patch:
                load(settings_class, environ, patch)  # raises on a value the service refuses
        unread = {name for name in environ if name.startswith("PLATFORM_") and name not in read}
        assert not unread, f"{service} ({values.name}) is given variables it does not read: {sorted(unread)}"


def test_the_install_lines_gateway_signs_in_with_the_identity_provider(helm: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    manifests = render(helm, CHART, "--values", str(CHART / "ci" / "oidc-values.yaml"))
    environ = container_environ(deployment(manifests, "gateway"), generated_secrets(manifests))
    settings = load(GatewaySettings, environ, monkeypatch)
    assert (settings.auth, settings.oidc_issuer, settings.oidc_client_id) == (
        "oidc", "https://login.example.com/realms/acme", "simulusion-platform")
    admin = one(manifests, "Secret", f"{FULLNAME}-admin-token")
    assert settings.admin_token.get_secret_value() == base64.b64decode(admin["data"]["token"]).decode()
    assert (settings.host, settings.port, settings.direct_steps) == ("0.0.0.0", 8000, False)
    assert settings.database_url == SECRET_VALUES["PLATFORM_DATABASE_URL"]


def test_the_envhost_advertises_its_pod_address_and_shares_the_gateways_ticket(
        helm: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifests = render(helm, CHART)
    generated = generated_secrets(manifests)
    envhost = load(EnvhostSettings, container_environ(deployment(manifests, "envhost"), generated), monkeypatch)
    assert envhost.envhost_id == POD_FIELDS["metadata.name"]
    assert envhost.envhost_advertise == "10.244.1.17:50100"
    assert envhost.envhost_step_advertise == "10.244.1.17:50101"
    assert envhost.envhost_listen == "0.0.0.0:50100"
    assert str(envhost.envhost_run_dir) == "/tmp/envhost"
    gateway = load(GatewaySettings, container_environ(deployment(manifests, "gateway"), generated), monkeypatch)
    assert envhost.ticket_secret is not None and len(envhost.ticket_secret) == 48
    assert gateway.step_ticket_secret is not None
    assert envhost.ticket_secret == generated[(f"{FULLNAME}-step-ticket", "secret")]
    ports = {p["name"]: p["containerPort"] for p in container(deployment(manifests, "envhost"))["ports"]}
    assert ports == {"grpc": 50100, "step-link": 50101}


def test_the_broker_reads_the_pools_and_the_idle_timeout(helm: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifests = render(helm, CHART, "--values", str(CHART / "ci" / "pools-values.yaml"))
    broker = load(BrokerSettings, container_environ(deployment(manifests, "broker"), {}), monkeypatch)
    assert broker.pools == "cartpole=2,pong=1"
    assert broker.idle_timeout == 600.0
    assert broker.start_timeout == 150.0
    assert str(broker.catalog) == "/etc/simulusion/catalog.toml"
