"""How many sessions a second one broker places and closes, apart from starting instances.

The real broker (`python -m platform_broker`, its own process) on a real nats-server, with its
database in SQLite or in the machine's PostgreSQL (a throwaway database), places sessions on
`--hosts` env hosts that answer at once (each an instance "started" the moment it is asked; a
real env host's start of an instance takes ~0.6 s of its own CPU, warm pools ~60 ms: see
`session_start.py`). `--clients` concurrent clients each create a session and close it, again
and again, for `--seconds`; the rate is sessions created and closed per second. What bounds it
is the broker: its request handling and its writes (a session's row created, moved to RUNNING,
closed). Runs alternate between the databases; medians with each round's figures.

    uv run python bench/placement_rate.py --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

POSTGRES = "postgresql://postgres@127.0.0.1:5432"


class InstantEnvHost:
    """An env host that starts and stops instances at once, with room for all of them."""

    def __init__(self, nc, host_id: str, capacity: int) -> None:
        self.nc, self.host_id, self.capacity = nc, host_id, capacity
        self.running: set[str] = set()

    async def start(self) -> None:
        from platform_bus import flush_queued
        from platform_contracts import subjects

        await self.nc.subscribe(subjects.envhost_start(self.host_id), cb=self._on_start)
        await self.nc.subscribe(subjects.envhost_stop(self.host_id), cb=self._on_stop)
        await self.nc.subscribe(subjects.envhost_list(self.host_id), cb=self._on_list)
        await flush_queued(self.nc)
        self._beat_task = asyncio.create_task(self._beat())

    async def _beat(self) -> None:
        from platform_contracts import subjects
        from simulusion.control.v1 import control_pb2

        while True:
            beat = control_pb2.HostHeartbeat(
                host_id=self.host_id, address="127.0.0.1:1", capacity=self.capacity, running=len(self.running),
                time=time.time(), instances=[control_pb2.InstanceInfo(session_id=s, alive=True, last_active_at=time.time())
                                             for s in self.running])
            await self.nc.publish(subjects.ENVHOST_HEARTBEAT, beat.SerializeToString())
            await asyncio.sleep(0.5)

    async def _on_start(self, msg) -> None:
        from simulusion.control.v1 import control_pb2
        from simulusion.env.v1 import environment_pb2

        request = control_pb2.StartInstanceRequest.FromString(msg.data)
        self.running.add(request.session_id)
        reply = control_pb2.StartInstanceReply(spec=environment_pb2.SpecResponse(env_id=request.entry.id))
        await msg.respond(reply.SerializeToString())

    async def _on_stop(self, msg) -> None:
        from simulusion.control.v1 import control_pb2

        request = control_pb2.StopInstanceRequest.FromString(msg.data)
        self.running.discard(request.session_id)
        await msg.respond(control_pb2.StopInstanceReply().SerializeToString())

    async def _on_list(self, msg) -> None:
        from simulusion.control.v1 import control_pb2

        infos = [control_pb2.InstanceInfo(session_id=s, alive=True, last_active_at=time.time()) for s in self.running]
        await msg.respond(control_pb2.ListInstancesReply(instances=infos).SerializeToString())


async def measure(nats_url: str, hosts: int, clients: int, seconds: float) -> float:
    import nats
    import nats.errors
    from platform_contracts import subjects
    from simulusion.control.v1 import control_pb2
    from simulusion.session.v1.options_pb2 import SessionOptions

    nc = await nats.connect(nats_url)
    envhosts = [InstantEnvHost(nc, f"bench-host-{index}", capacity=10_000) for index in range(hosts)]
    for host in envhosts:
        await host.start()
    request = control_pb2.CreateSessionRequest(options=SessionOptions(env_id="cartpole")).SerializeToString()
    deadline = time.monotonic() + 30
    while True:  # until the broker serves and has seen the hosts' heartbeats
        try:
            reply = control_pb2.SessionReply.FromString((await nc.request(subjects.BROKER_CREATE_SESSION, request,
                                                                           timeout=10)).data)
            problem = reply.error.message if reply.HasField("error") else ""
        except nats.errors.NoRespondersError:
            problem = "the broker is not serving yet"
        if not problem:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"the broker places nothing within 30 s: {problem}")
        await asyncio.sleep(0.3)
    done = 0
    stop_at = time.monotonic() + seconds

    async def client() -> None:
        nonlocal done
        while time.monotonic() < stop_at:
            made = control_pb2.SessionReply.FromString((await nc.request(subjects.BROKER_CREATE_SESSION, request,
                                                                          timeout=30)).data)
            if made.HasField("error"):
                raise RuntimeError(f"create failed: {made.error.message}")
            close = control_pb2.CloseSessionRequest(session_id=made.session.id, reason="bench")
            await nc.request(subjects.BROKER_CLOSE_SESSION, close.SerializeToString(), timeout=30)
            done += 1

    started = time.monotonic()
    await asyncio.gather(*(client() for _ in range(clients)))
    rate = done / (time.monotonic() - started)
    await nc.close()
    return rate


def one_round(database: str, hosts: int, clients: int, seconds: float) -> float:
    from platform_local.nats_process import nats_server_binary
    from platform_testing.ports import free_port

    root = Path(tempfile.mkdtemp(prefix="bench-placement-"))
    port = free_port()
    nats_process = subprocess.Popen([nats_server_binary(), "-a", "127.0.0.1", "-p", str(port), "-js", "-sd",
                                     str(root / "nats")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    nats_url = f"nats://127.0.0.1:{port}"
    database_name = ""
    if database == "sqlite":
        database_url = f"sqlite+aiosqlite:///{root}/platform.db"
    else:
        database_name = f"bench_{uuid.uuid4().hex[:8]}"
        subprocess.run(["psql", POSTGRES + "/postgres", "-qc", f"CREATE DATABASE {database_name}"], check=True)
        database_url = f"{POSTGRES}/{database_name}"
    env = {**os.environ, "PLATFORM_NATS_URL": nats_url, "PLATFORM_DATABASE_URL": database_url,
           "PLATFORM_LOG_LEVEL": "WARNING"}
    with open(root / "broker.log", "wb") as broker_log:
        broker = subprocess.Popen([sys.executable, "-m", "platform_broker"], env=env, stdout=subprocess.DEVNULL,
                                  stderr=broker_log)
    try:
        time.sleep(0.5)
        return asyncio.run(measure(nats_url, hosts, clients, seconds))
    finally:
        broker.terminate()
        broker.wait(15)
        nats_process.terminate()
        nats_process.wait(10)
        if database_name:
            subprocess.run(["psql", POSTGRES + "/postgres", "-qc", f"DROP DATABASE IF EXISTS {database_name} WITH (FORCE)"],
                           check=False)
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--databases", default="sqlite,postgres")
    args = parser.parse_args()
    databases = args.databases.split(",")
    rates: dict[str, list[float]] = {database: [] for database in databases}
    for round_number in range(args.rounds):
        for database in databases:
            rate = one_round(database, args.hosts, args.clients, args.seconds)
            rates[database].append(rate)
            print(f"round {round_number + 1} {database}: {rate:,.0f} sessions/s", flush=True)
    print(f"\n{args.clients} clients creating and closing sessions on {args.hosts} instant env hosts, "
          f"{args.rounds} rounds of {args.seconds:g} s")
    for database in databases:
        each = " / ".join(f"{rate:,.0f}" for rate in rates[database])
        print(f"{database:9s} {statistics.median(rates[database]):7,.1f} sessions placed and closed per second ({each})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
