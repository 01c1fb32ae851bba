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


def test_pick_the_most_free_capacity_counting_placements_not_yet_in_a_heartbeat():
    hosts = HostRegistry(clock=Clock())
    hosts.on_heartbeat(beat("a", capacity=4, running=1))  # 3 free
    hosts.on_heartbeat(beat("b", capacity=2))              # 2 free
    assert hosts.pick().host_id == "a"
    hosts.note_placed("a", "s-1")
    assert hosts.pick().host_id == "a"  # 2 and 2: the lowest id
    hosts.note_placed("a", "s-2")
    assert hosts.pick().host_id == "b"  # a has 1 free now
    hosts.note_placed("b", "s-3")
    hosts.note_placed("b", "s-4")
    hosts.note_placed("a", "s-5")
    assert hosts.pick() is None
    hosts.on_heartbeat(beat("b", 2, 1, "s-3"))  # b lists s-3 (counted in running); s-4 still pending
    assert hosts.pick() is None and hosts.get("b").free == 0
    hosts.on_heartbeat(beat("b", 2, 1, "s-3"))  # s-4's start failed: it never shows up...
    hosts.get("b").pending["s-4"] -= 120.0    # ...and stops counting after PENDING_PLACEMENT_S
    hosts.on_heartbeat(beat("b", 2, 1, "s-3"))
    assert hosts.pick().host_id == "b" and hosts.get("b").free == 1


def test_an_entry_asking_for_gpus_goes_only_to_a_host_offering_as_many():
    hosts = HostRegistry(clock=Clock())
    hosts.on_heartbeat(beat("a", capacity=8))                                   # no GPU
    hosts.on_heartbeat(control_pb2.HostHeartbeat(host_id="b", capacity=2, gpus=1))
    hosts.on_heartbeat(control_pb2.HostHeartbeat(host_id="c", capacity=1, gpus=4))
    assert hosts.pick().host_id == "a"  # no GPU asked for: the most free capacity
    assert hosts.pick(gpus=1).host_id == "b"  # a has more room but no GPU
    assert hosts.pick(gpus=2).host_id == "c"
    hosts.note_placed("c", "s-1")
    assert hosts.pick(gpus=2) is None and hosts.pick(gpus=1).host_id == "b"
    assert hosts.pick(gpus=5) is None


def test_a_heartbeat_sent_while_an_instance_starts_does_not_forget_it():
    hosts = HostRegistry(clock=Clock())
    hosts.on_heartbeat(beat("big", capacity=2))
    hosts.on_heartbeat(beat("small", capacity=1))
    hosts.note_placed("big", "s-1")
    hosts.on_heartbeat(beat("big", 2, 1, "s-1"))  # s-1 is up
    hosts.note_placed("big", "s-2")
    hosts.on_heartbeat(beat("big", 2, 1, "s-1"))  # sent before s-2 was up: s-2 still counts
    assert hosts.get("big").free == 0 and hosts.pick().host_id == "small"


def test_instance_activity_comes_from_the_last_heartbeat():
    hosts = HostRegistry(clock=Clock())
    hosts.on_heartbeat(beat("a", 4, 1, "s-1"))
    assert hosts.instance("a", "s-1").last_active_at == 5.0
    assert hosts.instance("a", "s-2") is None and hosts.instance("b", "s-1") is None


def test_a_host_that_restarted_or_was_lost_forgets_the_placements_it_never_listed():
    clock = Clock()
    hosts = HostRegistry(clock=clock)
    first = beat("b", 2)
    first.started_at = 100.0
    hosts.on_heartbeat(first)
    hosts.note_placed("b", "s-1")  # placed, then the host died before a beat listed it
    clock.now += 1.0
    hosts.on_heartbeat(first)
    assert hosts.get("b").free == 1, "the same process: s-1 still counts"
    restarted = beat("b", 2)
    restarted.started_at = 200.0
    hosts.on_heartbeat(restarted)
    assert hosts.get("b").free == 2 and hosts.pick().host_id == "b", "a new process runs only what it lists"

    hosts.note_placed("b", "s-2")
    clock.now += 30.0  # silent past the live window: lost, and its instances with it
    assert hosts.get("b") is None
    hosts.on_heartbeat(restarted)
    assert hosts.get("b").free == 2


def test_a_session_opened_and_closed_between_two_beats_stops_counting_when_a_beat_lists_it_ended():
    clock = Clock()
    hosts = HostRegistry(clock=clock)
    hosts.on_heartbeat(beat("b", 2))
    hosts.note_placed("b", "s-1")
    hosts.note_placed("b", "s-2")
    clock.now += 1.0
    ended = beat("b", 2)  # s-1 started and stopped before this beat; s-2 still starting
    ended.ended_session_ids.append("s-1")
    hosts.on_heartbeat(ended)
    assert hosts.get("b").free == 1, "s-1 ended and counts no more; s-2 is still on its way"
