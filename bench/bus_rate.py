"""What NATS JetStream sustains for step events: one server against a three-server cluster, with
the stream kept once (R1) or three times (R3).

Each publisher process is an env host's event publisher (`platform_envhost.publisher`, the
real one: pipelined batches, every message acked by JetStream) publishing `--events` step
events of `--size` bytes on its own sessions' subjects into the PLATFORM_SESSIONS stream;
the rate is events acked per second over all publishers. The servers run on loopback (a
cluster's servers share this machine's cores, so the cluster's figures are a floor: on
separate machines each server has its own). Runs alternate between the setups; medians, with
each round's figures, and the ratio against one server R1 measured in the same run.

    uv run python bench/bus_rate.py --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SETUPS = ("1 server R1", "3 servers R1", "3 servers R3")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_servers(count: int, root: Path) -> tuple[list[subprocess.Popen[bytes]], list[str]]:
    """`count` nats-servers with JetStream on loopback, routed into one cluster when count > 1."""
    from platform_local.nats_process import nats_server_binary

    client_ports = [free_port() for _ in range(count)]
    route_ports = [free_port() for _ in range(count)]
    routes = ",".join(f"nats://127.0.0.1:{port}" for port in route_ports)
    processes = []
    for index in range(count):
        store = root / f"s{index}"
        store.mkdir(parents=True)
        argv = [nats_server_binary(), "-a", "127.0.0.1", "-p", str(client_ports[index]), "-js", "-sd", str(store),
                "--server_name", f"bench-{index}"]
        if count > 1:
            argv += ["--cluster_name", "bench", "--cluster", f"nats://127.0.0.1:{route_ports[index]}",
                     "--routes", routes]
        processes.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for port in client_ports:
        wait_listening(port)
    return processes, [f"nats://127.0.0.1:{port}" for port in client_ports]


def wait_listening(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no nats-server listens on port {port} after {timeout:g} s") from None
            time.sleep(0.05)


async def make_stream(urls: list[str], replicas: int) -> None:
    """The sessions stream as the services make it, with `replicas` copies (waits for the
    cluster to elect a JetStream leader)."""
    import nats
    from nats.js.api import StreamConfig
    from platform_contracts import streams, subjects

    nc = await nats.connect(urls)
    js = nc.jetstream()
    deadline = time.monotonic() + 30
    while True:
        try:
            await js.add_stream(StreamConfig(name=subjects.SESSIONS_STREAM, subjects=[subjects.SESSION_EVENTS_WILDCARD],
                                             duplicate_window=streams.DUPLICATE_WINDOW_S, num_replicas=replicas))
            break
        except Exception:  # no JetStream leader yet in a cluster that is still forming
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)
    await nc.close()


def publish(url: str, index: int, events: int, size: int, ready: multiprocessing.Event, go: multiprocessing.Event,
            results: multiprocessing.Queue) -> None:
    """One env host's publisher: `events` step events on 8 sessions of its own; puts its seconds."""
    import nats
    from platform_envhost.publisher import EventPublisher, Outgoing

    async def run() -> float:
        nc = await nats.connect(url)
        publisher = EventPublisher(nc)
        await publisher.start()
        payload = bytes(size)
        from platform_contracts.subjects import session_steps

        subjects = [session_steps(f"bench{index}x{session}") for session in range(8)]
        ready.set()
        while not go.is_set():
            await asyncio.sleep(0.001)
        started = time.perf_counter()
        for sent in range(events):
            await publisher.submit(Outgoing(subjects[sent % 8], payload, {"Nats-Msg-Id": f"{index}-{sent}"}))
        assert await publisher.flush(120), "the events were not all acked within 120 s"
        elapsed = time.perf_counter() - started
        await publisher.close()
        await nc.close()
        return elapsed

    results.put(asyncio.run(run()))


def one_round(setup: str, publishers: int, events: int, size: int) -> float:
    """Events acked per second over all publishers, on a fresh setup."""
    servers = 1 if setup.startswith("1 ") else 3
    replicas = 3 if setup.endswith("R3") else 1
    root = Path(tempfile.mkdtemp(prefix="bench-bus-"))
    processes, urls = start_servers(servers, root)
    try:
        asyncio.run(make_stream(urls, replicas))
        context = multiprocessing.get_context("spawn")
        go = context.Event()
        results = context.Queue()
        readies, children = [], []
        for index in range(publishers):
            ready = context.Event()
            child = context.Process(target=publish, args=(urls[index % servers], index, events, size, ready, go, results))
            child.start()
            readies.append(ready)
            children.append(child)
        for ready in readies:
            if not ready.wait(60):
                raise RuntimeError(f"{setup}: a publisher did not connect within 60 s")
        go.set()
        seconds = [results.get(timeout=180) for _ in children]
        for child in children:
            child.join(30)
        return publishers * events / max(seconds)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(10)
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--publishers", type=int, default=2, help="env host publishers, each its own process")
    parser.add_argument("--events", type=int, default=40_000, help="events per publisher")
    parser.add_argument("--size", type=int, default=200, help="bytes per event (a CartPole step is ~150-200)")
    args = parser.parse_args()
    rates: dict[str, list[float]] = {setup: [] for setup in SETUPS}
    for round_number in range(args.rounds):
        for setup in SETUPS:
            rate = one_round(setup, args.publishers, args.events, args.size)
            rates[setup].append(rate)
            print(f"round {round_number + 1} {setup}: {rate:,.0f} events/s", flush=True)
    base = statistics.median(rates[SETUPS[0]])
    print(f"\n{args.publishers} publishers x {args.events:,} events of {args.size} B, {args.rounds} rounds")
    for setup in SETUPS:
        median = statistics.median(rates[setup])
        each = " / ".join(f"{rate:,.0f}" for rate in rates[setup])
        print(f"{setup:14s} {median:9,.0f} events/s ({each}); {median / base:.2f} of 1 server R1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
