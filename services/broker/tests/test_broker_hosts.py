"""Env host liveness and placement from heartbeats (a controlled clock, no NATS)."""

from __future__ import annotations

from platform_broker.hosts import HostRegistry
from simulusion.control.v1 import control_pb2


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def beat(host_id: str, capacity: int, running: int = 0, *sessions: str) -> control_pb2.HostHeartbeat:
    instances = [control_pb2.InstanceInfo(session_id=s, alive=True, last_active_at=5.0) for s in sessions]
    return control_pb2.HostHeartbeat(host_id=host_id, address=f"{host_id}:7000", capacity=capacity,
                                     running=running, instances=instances)


def test_a_host_is_live_for_ten_seconds_after_its_heartbeat():
    clock = Clock()
    hosts = HostRegistry(clock=clock)
    hosts.on_heartbeat(beat("a", 2))
    clock.now += 10.0
    assert [h.host_id for h in hosts.live()] == ["a"] and hosts.get("a") is not None
    clock.now += 0.5
    assert hosts.live() == [] and hosts.get("a") is None and hosts.pick() is None


def test_pick_the_most_free_capacity_counting_placements_since_the_heartbeat():
    hosts = HostRegistry(clock=Clock())
    hosts.on_heartbeat(beat("a", capacity=4, running=1))  # 3 free
    hosts.on_heartbeat(beat("b", capacity=2))              # 2 free
    assert hosts.pick().host_id == "a"
    hosts.note_placed("a")
    assert hosts.pick().host_id == "a"  # 2 and 2: the lowest id
    hosts.note_placed("a")
    assert hosts.pick().host_id == "b"  # a has 1 free now
    hosts.note_placed("b")
    hosts.note_placed("b")
    hosts.note_placed("a")
    assert hosts.pick() is None
    hosts.on_heartbeat(beat("b", capacity=2, running=1))  # a new heartbeat resets b's count
    assert hosts.pick().host_id == "b" and hosts.get("b").free == 1


def test_instance_activity_comes_from_the_last_heartbeat():
    hosts = HostRegistry(clock=Clock())
    hosts.on_heartbeat(beat("a", 4, 1, "s-1"))
    assert hosts.instance("a", "s-1").last_active_at == 5.0
    assert hosts.instance("a", "s-2") is None and hosts.instance("b", "s-1") is None
