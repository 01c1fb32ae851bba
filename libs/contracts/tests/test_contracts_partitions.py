"""Session partitions: every publisher and every recorder compute the same partition of a
session's subjects (FNV-1a of the life's name, else of the session id)."""

from __future__ import annotations

from platform_contracts import subjects


def test_a_sessions_subjects_carry_its_partition_as_their_last_token() -> None:
    partition = subjects.session_partition("s-0123456789ab")
    assert 0 <= partition < subjects.SESSION_PARTITIONS
    for subject in (subjects.session_lifecycle("s-0123456789ab"), subjects.session_steps("s-0123456789ab"),
                    subjects.session_step_batches("s-0123456789ab"), subjects.session_snapshots("s-0123456789ab")):
        assert subject.split(".")[-1] == str(partition)
        assert subjects.session_of_subject(subject) == "s-0123456789ab"
    assert subjects.session_event_kind(subjects.session_step_batches("s-1")) == "steps"
    assert subjects.session_event_kind("platform.session.s-1.steps") == ""  # not a partitioned subject


def test_the_partition_is_fnv1a_of_the_id_or_the_life_and_spreads_sessions() -> None:
    # FNV-1a 32 of "a" is 0xe40c292c: any implementation must agree on it
    assert subjects.session_partition("a") == 0xE40C292C % subjects.SESSION_PARTITIONS
    assert subjects.session_partition("s-1", life="robot-1") == subjects.session_partition("robot-1")
    assert subjects.session_steps("s-1", "robot-1") == f"platform.session.s-1.step.{subjects.session_partition('robot-1')}"
    spread = {subjects.session_partition(f"s-{n:012x}") for n in range(200)}
    assert spread == set(range(subjects.SESSION_PARTITIONS))


def test_a_partitions_filter_and_step_subjects_match_its_sessions_subjects_only() -> None:
    assert subjects.partition_events(3) == "platform.session.*.*.3"
    assert subjects.partition_step_subjects(3) == ("platform.session.*.step.3", "platform.session.*.steps.3")
    assert subjects.RECORDER_CONSUMERS == tuple(f"recorder-p{p}" for p in range(subjects.SESSION_PARTITIONS))
