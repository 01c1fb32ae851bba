"""compose.yaml and compose.gpu.yaml, as a real Compose implementation reads them: Debian's
docker-compose parses, interpolates, merges and validates them (`config`) without an engine.
Then the parsed configuration is checked: ports, ./data, health checks, users, start order, the
GPU reservation, builds, commands and settings; and the step ticket secret's one-shot generator
is run for real."""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from platform_bus.step_tickets import secret_problem
from settings_names import PLATFORM_SERVICES, read_by

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
PLATFORM_UID = "10001:10001"
LONG_RUNNING = ("nats", "postgres", *PLATFORM_SERVICES)
THIRD_PARTY = ("nats", "postgres")
# The `observability` profile's (tests/deploy/test_compose_observability.py).
OBSERVABILITY = ("otel-collector", "jaeger", "prometheus", "grafana")


def compose_config(*files: str, profiles: tuple[str, ...] = (), env: dict[str, str] | None = None) -> dict[str, Any]:
    """What `docker-compose config` makes of the files, parsed."""
    tool = shutil.which("docker-compose")
    assert tool, "docker-compose is missing: scripts/install_system_deps.sh installs it (Debian's docker-compose)"
    command = [tool]
    for profile in profiles:
        command += ["--profile", profile]
    for file in files or ("compose.yaml",):
        command += ["-f", file]
    environ = {key: value for key, value in os.environ.items()
               if not key.startswith(("PLATFORM_", "POSTGRES_", "COMPOSE_"))}
    done = subprocess.run([*command, "config"], cwd=ROOT, capture_output=True, text=True,
                          env={**environ, **(env or {})})
    assert done.returncode == 0, f"docker-compose config failed: {done.stderr}"
    parsed: dict[str, Any] = yaml.safe_load(done.stdout)
    return parsed


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    return compose_config()


def services(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = config["services"]
    return found


def port_mapping(port: str | dict[str, Any]) -> tuple[str, int, int]:
    """(host address, published port, container port) of a `ports:` entry in either syntax
    (docker-compose 1.29 prints the short one: `127.0.0.1:8000:8000/tcp`)."""
    if isinstance(port, dict):
        return port.get("host_ip", ""), int(port["published"]), int(port["target"])
    host, published, target = port.split("/")[0].rsplit(":", 2)
    return host, int(published), int(target)


def volume_mount(volume: str | dict[str, Any], named: dict[str, Any]) -> tuple[str, str, str]:
    """(type, source, target) of a `volumes:` entry in either syntax (1.29: `/abs/data:/data:rw`)."""
    if isinstance(volume, dict):
        return volume["type"], volume["source"], volume["target"]
    source, target = volume.split(":")[:2]
    return ("volume" if source in named else "bind"), source, target


def test_the_services_and_the_build_profile(config: dict[str, Any]) -> None:
    assert set(services(config)) == {"secrets", *LONG_RUNNING, "byo-example", *OBSERVABILITY}
    profiled = {name: service["profiles"] for name, service in services(config).items() if "profiles" in service}
    # byo-example: built by --profile build, never started by `up`; the others: --profile observability
    assert profiled == {"byo-example": ["build"], **{name: ["observability"] for name in OBSERVABILITY}}
    assert compose_config(profiles=("build",))["services"].keys() == services(config).keys()


def test_the_gateway_is_published_on_8000_or_platform_port(config: dict[str, Any]) -> None:
    def published(config: dict[str, Any]) -> list[tuple[str, int, int]]:
        return [port_mapping(port) for port in services(config)["gateway"]["ports"]]

    assert published(config) == [("127.0.0.1", 8000, 8000)]
    assert published(compose_config(env={"PLATFORM_PORT": "8080"})) == [("127.0.0.1", 8080, 8000)]
    assert published(compose_config(env={"PLATFORM_BIND_ADDRESS": "0.0.0.0"})) == [("0.0.0.0", 8000, 8000)]
    others = {name for name, service in services(config).items() if service.get("ports")}
    assert others == {"gateway", "otel-collector", "prometheus", "grafana"}, "only these are reached from outside"
    for name in others - {"gateway"}:  # the observability profile's: this machine only
        assert {port_mapping(port)[0] for port in services(config)[name]["ports"]} == {"127.0.0.1"}, name


def test_the_platform_services_run_as_uid_10001_unprivileged(config: dict[str, Any]) -> None:
    for name, service in services(config).items():
        assert not service.get("privileged"), name
        assert "network_mode" not in service and "pid" not in service, name
        if name == "postgres":  # its image starts as root and runs the server as its postgres user
            assert "user" not in service
            continue
        assert service["cap_drop"] == ["ALL"], name
        assert service["security_opt"] == ["no-new-privileges:true"], name
        if name == "secrets":
            assert service["user"] == "0:0" and set(service["cap_add"]) == {"CHOWN", "DAC_OVERRIDE", "FOWNER"}
        else:
            assert service["user"] == PLATFORM_UID, name
            assert "cap_add" not in service, name


def test_restart_policies(config: dict[str, Any]) -> None:
    for name in LONG_RUNNING:
        assert services(config)[name]["restart"] == "unless-stopped", name
    assert services(config)["secrets"]["restart"] == "no"


def test_every_long_running_service_is_health_checked(config: dict[str, Any]) -> None:
    for name in LONG_RUNNING:
        healthcheck = services(config)[name]["healthcheck"]
        assert healthcheck["test"][0] == "CMD" and healthcheck["retries"] >= 3, name
    for name in PLATFORM_SERVICES:
        assert services(config)[name]["healthcheck"]["test"] == [
            "CMD", "python", "-m", "platform_bus.healthcheck", name]
    assert "js-enabled-only=true" in services(config)["nats"]["healthcheck"]["test"][-1]
    assert services(config)["postgres"]["healthcheck"]["test"][1] == "pg_isready"


def test_the_env_host_has_the_id_its_health_check_asks_on(config: dict[str, Any]) -> None:
    environment = services(config)["envhost"]["environment"]
    assert environment["PLATFORM_ENVHOST_ID"]
    assert environment["PLATFORM_ENVHOST_ADVERTISE"] == "envhost:50051"


def test_services_start_after_what_they_need(config: dict[str, Any]) -> None:
    def needs(name: str) -> dict[str, str]:
        return {other: wait["condition"] for other, wait in services(config)[name].get("depends_on", {}).items()}

    healthy, done = "service_healthy", "service_completed_successfully"
    assert needs("gateway") == {"secrets": done, "nats": healthy, "postgres": healthy}
    assert needs("envhost") == {"secrets": done, "nats": healthy}
    assert needs("broker") == {"nats": healthy, "postgres": healthy}
    for name in ("machines", "evals"):
        assert needs(name) == {"secrets": done, "nats": healthy, "postgres": healthy}
    assert needs("recorder") == {"secrets": done, "nats": healthy}
    assert needs("nats") == {"secrets": done}  # its volume is handed to uid 10001 first
    assert needs("secrets") == {} and needs("postgres") == {}


def test_the_data_is_in_dot_data_and_two_volumes(config: dict[str, Any]) -> None:
    mounts: dict[str, set[str]] = {}
    for name, service in services(config).items():
        if name in OBSERVABILITY:  # their configuration files and ./data's files: the profile's test
            continue
        for volume in service.get("volumes", []):
            kind, source, target = volume_mount(volume, config["volumes"])
            if kind == "bind":
                assert Path(source) == DATA, f"{name} mounts {source}: only ./data is the platform's"
            else:
                assert kind == "volume" and source in config["volumes"], (name, volume)
            mounts.setdefault(source, set()).add(f"{name}:{target}")
    assert mounts == {
        str(DATA): {f"{name}:/data" for name in ("secrets", "gateway", "envhost", "recorder", "machines", "evals")},
        "nats-data": {"nats:/data", "secrets:/nats"},
        "postgres-data": {"postgres:/var/lib/postgresql/data"},
    }
    assert services(config)["nats"]["command"] == ["-js", "-sd", "/data", "-m", "8222"]
    environment = {name: services(config)[name].get("environment", {}) for name in PLATFORM_SERVICES}
    assert environment["recorder"]["PLATFORM_RECORDINGS"] == "/data/recordings"
    assert environment["evals"]["PLATFORM_RECORDINGS"] == "/data/recordings"  # the evals' logs beside them
    assert environment["gateway"]["PLATFORM_CACHE_DIR"] == "/data/cache"  # the previews
    assert environment["machines"]["PLATFORM_SSH_KEY"] == "/data/ssh/id_ed25519"
    assert environment["gateway"]["PLATFORM_WADS"] == environment["envhost"]["PLATFORM_WADS"] == "/data/wads"


def test_the_services_share_nats_and_postgresql(config: dict[str, Any]) -> None:
    urls = set()
    for name in PLATFORM_SERVICES:
        environment = services(config)[name]["environment"]
        assert environment["PLATFORM_NATS_URL"] == "nats://nats:4222", name
        if "PLATFORM_DATABASE_URL" in environment:
            urls.add(environment["PLATFORM_DATABASE_URL"])
    assert urls == {"postgresql+asyncpg://platform:platform@postgres:5432/platform"}
    password = compose_config(env={"POSTGRES_PASSWORD": "s3cret"})
    assert services(password)["postgres"]["environment"]["POSTGRES_PASSWORD"] == "s3cret"
    assert services(password)["broker"]["environment"]["PLATFORM_DATABASE_URL"] == (
        "postgresql+asyncpg://platform:s3cret@postgres:5432/platform")


def test_every_platform_variable_set_is_one_its_service_reads(config: dict[str, Any]) -> None:
    for name in PLATFORM_SERVICES:
        environment = services(config)[name].get("environment", {})
        unread = {key for key in environment if key.startswith("PLATFORM_") and key not in read_by(name)}
        assert not unread, f"{name} is given {sorted(unread)}, which it never reads"


def test_the_gateway_and_env_host_read_the_same_secret_file(config: dict[str, Any]) -> None:
    for name in ("gateway", "envhost"):
        assert services(config)[name]["environment"]["PLATFORM_STEP_TICKET_SECRET_FILE"] == "/data/step-ticket-secret"
    assert services(config)["gateway"]["environment"]["PLATFORM_DIRECT_STEPS"] == "false"


def test_every_command_names_a_module_of_the_workspace(config: dict[str, Any]) -> None:
    for name in PLATFORM_SERVICES:
        command = services(config)[name]["command"]
        assert command == ["python", "-m", f"platform_{name}"], name
        assert importlib.util.find_spec(f"platform_{name}.__main__") is not None, command


def test_the_builds_and_image_tags(config: dict[str, Any]) -> None:
    built = services(compose_config(profiles=("build",), env={"PLATFORM_VERSION": "1.2.3"}))
    builds = {name: service["build"] for name, service in built.items() if "build" in service}
    assert set(builds) == {"gateway", "envhost", "byo-example"}
    for name, build in builds.items():
        assert Path(build["context"]) == ROOT, name
        assert (ROOT / build["dockerfile"]).is_file(), f"{name}: {build['dockerfile']} does not exist"
    assert builds["gateway"]["dockerfile"] == "deploy/docker/platform.Dockerfile"
    assert builds["envhost"]["dockerfile"] == "deploy/docker/envs.Dockerfile"
    assert builds["byo-example"]["dockerfile"] == "envs/byo-example/Dockerfile"
    images = {name: service["image"] for name, service in built.items()}
    for name in ("secrets", "gateway", "broker", "recorder", "machines", "evals"):
        assert images[name] == "simulusion-platform:1.2.3", name
    assert images["envhost"] == "simulusion-platform-envs:1.2.3"
    assert images["byo-example"] == "simulusion/byo-example:1.2.3"
    assert services(config)["gateway"]["image"] == "simulusion-platform:latest"


def test_the_gpu_file_reserves_nvidia_gpus_for_the_env_host_alone() -> None:
    gpu = services(compose_config("compose.yaml", "compose.gpu.yaml"))
    reservation = gpu["envhost"]["deploy"]["resources"]["reservations"]["devices"]
    assert reservation == [{"driver": "nvidia", "count": "all", "capabilities": ["gpu"]}]
    assert gpu["envhost"]["environment"]["MUJOCO_GL"] == "egl"
    assert "graphics" in gpu["envhost"]["environment"]["NVIDIA_DRIVER_CAPABILITIES"]
    assert gpu["envhost"]["environment"]["PLATFORM_ENVHOST_ID"]  # compose.yaml's settings kept
    assert [name for name, service in gpu.items() if "deploy" in service] == ["envhost"]
    two = services(compose_config("compose.yaml", "compose.gpu.yaml", env={"PLATFORM_GPUS": "2"}))
    assert str(two["envhost"]["deploy"]["resources"]["reservations"]["devices"][0]["count"]) == "2"


def run_secrets_service(config: dict[str, Any], data: Path, nats: Path) -> subprocess.CompletedProcess[str]:
    """The one-shot `secrets` service's command, run here with its folders in `data` and `nats`."""
    service = services(config)["secrets"]
    command = service["command"]
    assert command[:2] == ["python", "-c"], command
    environment = {**service["environment"], "DATA_DIR": str(data), "NATS_DIR": str(nats)}
    return subprocess.run([sys.executable, "-c", command[2]], capture_output=True, text=True,
                          env={**os.environ, **environment}, timeout=60)


def test_the_step_ticket_secret_and_metrics_token_are_generated_once_for_uid_10001(config: dict[str, Any], tmp_path: Path) -> None:
    assert os.geteuid() == 0, "the secrets service runs as root (it hands ./data to uid 10001): run this test as root"
    data, nats = tmp_path / "data", tmp_path / "nats"
    first = run_secrets_service(config, data, nats)
    assert first.returncode == 0, first.stderr
    secret_file, token_file = data / "step-ticket-secret", data / "metrics-token"
    assert first.stdout == (f"step ticket secret: generated {secret_file}\n"
                            f"metrics token: generated {token_file}\n")
    secret, token = secret_file.read_text(), token_file.read_text()
    for made in (secret_file, token_file):
        info = made.stat()
        assert (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid) == (0o600, 10001, 10001), made
    assert secret_problem(secret.strip()) is None and len(secret.strip()) == 64
    assert len(token.strip()) == 64 and token != secret

    again = run_secrets_service(config, data, nats)
    assert (again.returncode, again.stdout) == (0, f"step ticket secret: kept {secret_file}\n"
                                                   f"metrics token: kept {token_file}\n")
    assert secret_file.read_text() == secret, "the secret was generated again"
    assert token_file.read_text() == token, "the metrics token was generated again"

    for folder, mode in (("", 0o755), ("ssh", 0o700), ("recordings", 0o750), ("recorder-spool", 0o750),
                         ("cache", 0o750), ("wads", 0o750), ("envhost", 0o750), ("prometheus", 0o750),
                         ("grafana", 0o750)):
        info = (data / folder).stat()
        assert (stat.S_IMODE(info.st_mode), info.st_uid) == (mode, 10001), folder
    assert nats.stat().st_uid == 10001


def test_the_generated_secret_is_what_the_gateway_and_env_host_read(config: dict[str, Any], tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from platform_envhost.config import Settings as EnvHostSettings
    from platform_gateway.config import Settings as GatewaySettings

    assert run_secrets_service(config, tmp_path / "data", tmp_path / "nats").returncode == 0
    secret_file = tmp_path / "data" / "step-ticket-secret"
    monkeypatch.delenv("PLATFORM_STEP_TICKET_SECRET", raising=False)
    monkeypatch.setenv("PLATFORM_STEP_TICKET_SECRET_FILE", str(secret_file))
    expected = secret_file.read_text().strip()
    assert GatewaySettings().ticket_secret == expected
    assert EnvHostSettings(envhost_id="envhost-1").ticket_secret == expected
