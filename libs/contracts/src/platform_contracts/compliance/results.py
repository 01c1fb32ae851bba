"""What a compliance check takes and returns: the connection, its options, its result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from simulusion.env.v1 import environment_pb2 as env_pb


class Connection(Protocol):
    """A lockstep connection to an environment: one request, then its response."""

    def call(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse: ...


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check. A skipped check (nothing to check) counts as passed."""

    name: str
    passed: bool
    message: str
    skipped: bool = False

    @property
    def status(self) -> str:
        """One of PASS, FAIL and SKIP."""
        return "SKIP" if self.skipped else ("PASS" if self.passed else "FAIL")


@dataclass(frozen=True)
class ComplianceOptions:
    """How hard the checks push.

    Attributes:
        seed: the seed of every reset, and of the sampled actions.
        steps: steps per rollout (fewer when an episode ends first).
        snapshot_steps: steps replayed after a restore.
        warmup_steps: steps taken before the snapshot.
    """

    seed: int = 1234
    steps: int = 20
    snapshot_steps: int = 10
    warmup_steps: int = 3


class CheckFailed(Exception):
    """Raised inside a check: the message says what was wrong."""


class CheckSkipped(Exception):
    """Raised inside a check: it does not apply to this environment."""
