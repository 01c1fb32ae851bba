"""Recording.append's typed decision (Recording.decide): written, duplicate or orphan, and why."""

from __future__ import annotations

from pathlib import Path

from platform_recorder.writing.recording import AppendDecision, Appended, OrphanReason, Recording
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import reset_event, started, step_event, subject_of
from simulusion.bus.v1 import events_pb2


def new_recording(tmp_path: Path, sid: str = "s1") -> Recording:
    writer = RecordingWriter(tmp_path)
    writer.process([(subject_of(started(sid)), started(sid).SerializeToString())])
    recording = Recording.load(writer.storage, sid, writer.local_dir(sid))
    assert recording is not None
    return recording


def test_written_duplicate_gap_and_late(tmp_path: Path) -> None:
    recording = new_recording(tmp_path)
    first = reset_event("s1", 1, 0)
    assert recording.decide(first) == AppendDecision(Appended.WRITTEN, index=0)
    assert recording.append(first).outcome is Appended.WRITTEN
    assert recording.append(first) == AppendDecision(Appended.DUPLICATE)  # a redelivery

    ahead = step_event("s1", 4, 0, 3)
    decided = recording.decide(ahead)
    assert decided == AppendDecision(Appended.WRITTEN, index=0, gap=(2, 3))
    assert recording.decide(ahead) == decided and recording.last_seq == 1, "deciding changes nothing"
    assert recording.append(ahead) == decided
    assert recording.missing == {2, 3} and recording.last_seq == 4

    late = step_event("s1", 2, 0, 1)
    assert recording.append(late) == AppendDecision(Appended.WRITTEN, index=0, late=True)
    assert recording.missing == {3} and recording.last_seq == 4
    assert recording.decide(late).outcome is Appended.DUPLICATE  # once is enough
    assert recording.meta.orphan_seqs == []


def test_orphans_say_why(tmp_path: Path) -> None:
    recording = new_recording(tmp_path)
    assert recording.append(reset_event("s1", 1, 0)).outcome is Appended.WRITTEN

    cases: list[tuple[events_pb2.StepEvent, OrphanReason, str]] = [
        (step_event("s1", 0, 0, 1), OrphanReason.NO_SEQ, "it has no seq"),
        (reset_event("s1", 2, 0), OrphanReason.EPISODE_STARTED, "episode 0 already started"),
        (events_pb2.StepEvent(session_id="s1", seq=3, episode=0), OrphanReason.NO_KIND, "it has no kind"),
    ]
    for event, reason, words in cases:
        decision = recording.append(event)
        assert (decision.outcome, decision.reason) == (Appended.ORPHAN, reason), event
        assert decision.why(event) == words
    assert recording.meta.orphan_seqs == [0, 2, 3]

    assert recording.append(step_event("s1", 4, 0, 1, terminated=True)).outcome is Appended.WRITTEN
    after_the_end = step_event("s1", 5, 0, 2)
    ended = recording.append(after_the_end)
    assert (ended.outcome, ended.reason, ended.why(after_the_end)) == (
        Appended.ORPHAN, OrphanReason.EPISODE_ENDED, "episode 0 already ended")
    assert AppendDecision(Appended.WRITTEN).why(after_the_end) == ""


def test_the_writer_counts_outcomes_by_their_value(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    events = [started("s1"), reset_event("s1", 1, 0), reset_event("s1", 1, 0), step_event("s1", 0, 0, 1)]
    counts = writer.process([(subject_of(e), e.SerializeToString()) for e in events])
    assert (counts["written"], counts["duplicate"], counts["orphan"]) == (1, 1, 1)
    assert counts[Appended.WRITTEN] == 1
