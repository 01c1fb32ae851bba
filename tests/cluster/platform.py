"""The platform across machines (network namespaces, `cluster.network`) as real processes:

- `nats-1..3`: a NATS cluster of three servers, each on its machine, JetStream on all three; the
  services get all three URLs (PLATFORM_NATS_URL) and the sessions stream is stored on three
  (PLATFORM_JETSTREAM_REPLICAS=3);
- `broker`, `gateway`: one machine each; `envhost-<x>`: one machine per env host, its gRPC and
  step link bound to that machine's address (so that is what it advertises);
- `recorder-1`, `recorder-2`: two recorders, each on its machine, sharing the session partitions
  (platform_recorder.partitions, 5 s leases) and one spool folder (what a ReadWriteMany volume
  is to the chart's recorders: the part files a dead recorder left are there for the other);
- PostgreSQL (the root namespace's, 127.0.0.1:5432: a database of its own, dropped at the end)
  through a forwarder on the bridge's address; S3: moto's server on the bridge's address.

Each service is started as the local launcher starts it (`platform_local.services.service_env`,
`python -m platform_<name>`), inside `ip netns exec <machine>`, under one
`platform_local.Supervisor` (logs in `<root>/logs/<name>.log`), and can be killed and started
again on its own. `stop` removes everything, also after a failure.
"""

from __future__ import annotations

import re
import secrets
import signal
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Self

from platform_local.nats_process import MAX_PAYLOAD, READY, nats_server_binary
from platform_local.services import PlatformLayout, service_env
from platform_local.supervisor import ChildProcess, ServiceSpec, Supervisor
from platform_testing.platform import clean_env
from platform_testing.ports import free_port
from platform_testing.postgres import PG_HOST, PG_PORT, PG_USER, admin_sql
from platform_testing.s3_server import S3Server

from cluster.network import ClusterNetwork, Machine

NATS_SERVERS = ("nats-1", "nats-2", "nats-3")
NATS_PORT, ROUTE_PORT, MONITOR_PORT, GATEWAY_PORT, ENVHOST_PORT, STEP_LINK_PORT = 4222, 6222, 8222, 8000, 7000, 7001
REPLICAS = 3
RECORDER_LEASE_S = 5
FORWARDING = re.compile(r"^forwarding$")
JETSTREAM_LEADER = re.compile(r"JetStream cluster new metadata leader|Self is new JetStream cluster metadata leader")
FORWARDER = Path(__file__).with_name("forwarder.py")


def monitor_url(cluster: ClusterPlatform, server: str) -> str:
    """A NATS server's monitoring endpoint (/connz, /jsz, ...)."""
    return f"http://{cluster.machine(server).address}:{MONITOR_PORT}"


class ClusterPlatform:
    """The platform on machines under `root` (a test's empty directory).

    Args:
        envhosts: env host name -> its capacity (PLATFORM_ENVHOST_CAPACITY); each gets a machine.
        gpus: env host name -> the GPUs it offers an instance (PLATFORM_ENVHOST_GPUS; default 0).
        catalog: the broker's catalog.toml (PLATFORM_CATALOG), as text; empty: the built-ins.
        extra_env: variables for every service, over the harness's.
        recorders: how many recorders (`recorder-1`, ...), each on its machine.
    """

    def __init__(self, root: Path, envhosts: Mapping[str, int], gpus: Mapping[str, int] | None = None,
                 catalog: str = "", extra_env: Mapping[str, str] | None = None, recorders: int = 2) -> None:
        self.root = root
        self.envhosts = dict(envhosts)
        self.recorders = tuple(f"recorder-{n}" for n in range(1, recorders + 1))
        self.gpus = dict(gpus or {})
        self.catalog = catalog
        self.extra_env = dict(extra_env or {})
        self.network = ClusterNetwork()
        self.supervisor = Supervisor(root / "logs")
        self.database = f"cluster_{uuid.uuid4().hex}"
        self.bucket = f"cluster-{uuid.uuid4().hex[:16]}"
        self.s3: S3Server | None = None
        self.secret = secrets.token_urlsafe(32)
        self.database_url = ""  # through the forwarder, once started
        self._database_made = False

    # -- addresses

    def machine(self, name: str) -> Machine:
        return self.network.machines[name]

    @property
    def url(self) -> str:
        return f"http://{self.machine('gateway').address}:{GATEWAY_PORT}"

    @property
    def nats_urls(self) -> list[str]:
        return [f"nats://{self.machine(name).address}:{NATS_PORT}" for name in NATS_SERVERS]

    def envhost_id(self, name: str) -> str:
        return f"{name}-{self.network.tag}"

    def step_address(self, name: str) -> str:
        return f"{self.machine(name).address}:{STEP_LINK_PORT}"

    # -- start and stop

    def start(self) -> Self:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        self.network.start()
        for name in (*NATS_SERVERS, "broker", "gateway", *self.recorders, *self.envhosts):
            self.network.add(name)
        bridge = self.network.gateway_address
        admin_sql(f'CREATE DATABASE "{self.database}"')
        self._database_made = True
        database_port = free_port()
        forwarder = self.supervisor.add(ServiceSpec("postgres-forwarder", [
            sys.executable, str(FORWARDER), f"{bridge}:{database_port}", f"{PG_HOST}:{PG_PORT}"], echo=False))
        forwarder.start()
        forwarder.wait_for_line(FORWARDING, 30)
        self.s3 = S3Server(host=bridge, log_path=self.root / "logs" / "moto.log").start()
        self.database_url = f"postgresql://{PG_USER}@{bridge}:{database_port}/{self.database}"
        for name in NATS_SERVERS:
            self.start_service(name, wait=False)
        for name in NATS_SERVERS:
            self.supervisor[name].wait_for_line(READY, 30)
        for name in NATS_SERVERS:
            self.supervisor[name].wait_for_line(JETSTREAM_LEADER, 60)
        for name in ("broker", *self.recorders, *self.envhosts, "gateway"):
            self.start_service(name, wait=False)
        self.wait_ready()

    def stop(self) -> None:
        self.supervisor.stop_all(timeout=10)
        if self.s3 is not None:
            self.s3.stop()
        self.network.stop()
        if self._database_made:
            admin_sql(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            self._database_made = False

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- one service

    def start_service(self, name: str, wait: bool = True) -> ChildProcess:
        """Starts (or starts again) one server or service on its machine; for NATS, the broker
        or the gateway, `wait` waits until it serves."""
        spec = self._nats_spec(name) if name in NATS_SERVERS else self._service_spec(name)
        child = self.supervisor.add(spec)
        child.start()
        if wait and name in NATS_SERVERS:
            child.wait_for_line(READY, 30)
        elif wait and name in ("broker", "gateway"):
            self.wait_ready()
        return child

    def kill(self, name: str, sig: int = signal.SIGKILL) -> int | None:
        """Sends `sig` to one server or service and waits for it to end (SIGKILL after 10 s)."""
        return self.supervisor[name].stop(sig, 10)

    def log(self, name: str) -> str:
        path = self.supervisor[name].log_path
        return path.read_text(errors="replace") if path.exists() else ""

    def check(self) -> None:
        """Raises platform_local.ServiceExited for a process that died unasked."""
        if error := self.supervisor.unexpected_exit():
            raise error

    def wait_ready(self, timeout: float = 90.0) -> None:
        """Until the gateway answers GET /v0/envs (the broker behind it serving)."""
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            self.check()
            try:
                with urllib.request.urlopen(f"{self.url}/v0/envs", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}"
            except OSError as exc:
                last = str(exc)
            time.sleep(0.2)
        raise AssertionError(f"the gateway at {self.url} did not answer within {timeout:g} s ({last}); "
                             f"logs in {self.root / 'logs'}")

    # -- how each runs

    def _nats_spec(self, name: str) -> ServiceSpec:
        machine = self.machine(name)
        store = self.root / name
        store.mkdir(parents=True, exist_ok=True)
        routes = ", ".join(f'"nats-route://{self.machine(other).address}:{ROUTE_PORT}"'
                           for other in NATS_SERVERS if other != name)
        config = store / "nats-server.conf"
        config.write_text(
            f'server_name: "{name}"\nlisten: "{machine.address}:{NATS_PORT}"\nmax_payload: {MAX_PAYLOAD}\n'
            f'http: "{machine.address}:{MONITOR_PORT}"\n'
            f'jetstream {{ store_dir: "{store}" }}\n'
            f'cluster {{ name: "sc{self.network.tag}", listen: "{machine.address}:{ROUTE_PORT}", '
            f'routes: [{routes}] }}\n')
        return ServiceSpec(name, machine.argv([nats_server_binary(), "-c", str(config)]), env=clean_env(), echo=False)

    def _service_spec(self, name: str) -> ServiceSpec:
        assert self.s3 is not None
        machine = self.machine(name)
        workdir = self.root / name
        workdir.mkdir(parents=True, exist_ok=True)
        layout = PlatformLayout(workdir / "data", workdir / "recordings", ",".join(self.nats_urls),
                                self.machine("gateway").address, GATEWAY_PORT, self.secret)
        env = {**self.s3.env(self.bucket), "PLATFORM_DATABASE_URL": self.database_url,
               "PLATFORM_JETSTREAM_REPLICAS": str(REPLICAS), "PLATFORM_CACHE_DIR": str(workdir / "cache")}
        module = name
        if name in self.recorders:
            module = "recorder"
            env.update({"PLATFORM_RECORDER_ID": name, "PLATFORM_RECORDER_LEASE_S": str(RECORDER_LEASE_S),
                        "PLATFORM_RECORDER_SPOOL": str(self.root / "recorder-spool")})
        if name in self.envhosts:
            module = "envhost"
            env.update({"PLATFORM_ENVHOST_ID": self.envhost_id(name),
                        "PLATFORM_ENVHOST_CAPACITY": str(self.envhosts[name]),
                        "PLATFORM_ENVHOST_GPUS": str(self.gpus.get(name, 0)),
                        "PLATFORM_ENVHOST_LISTEN": f"{machine.address}:{ENVHOST_PORT}",
                        "PLATFORM_ENVHOST_STEP_LISTEN": f"{machine.address}:{STEP_LINK_PORT}"})
        if name == "broker" and self.catalog:
            (workdir / "catalog.toml").write_text(self.catalog)
            env["PLATFORM_CATALOG"] = str(workdir / "catalog.toml")
        env.update(self.extra_env)
        argv = machine.argv([sys.executable, "-m", f"platform_{module}"])
        return ServiceSpec(name, argv, env=service_env(module, layout, clean_env(), env), cwd=workdir)
