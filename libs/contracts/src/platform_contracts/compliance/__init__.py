"""The compliance suite: checks that any environment server passes, over any connection.

A connection is anything with `call(EnvRequest) -> EnvResponse` answering in lockstep: a gRPC
`Environment/Connect` stream to an environment server or an env host, or the SDK's session
stream. Each check starts from a seeded reset, so the checks run in any order on one
connection. Each returns a `CheckResult`; `run_all` runs them all, and
`EnvironmentComplianceTests` is an abstract pytest class that runs each as a test::

    class TestMyEnv(EnvironmentComplianceTests):
        @pytest.fixture(scope="class")
        @classmethod
        def connection(cls):
            ...  # yield a connection to the server under test

Modules: `results` (what a check returns and takes), `probe` (the connection as a check
sees it), `checks` (the checks, their registry and runner), `trajectories` (bit-exact
rollout comparison), `invalid_actions`, `frames` (frame and JPEG-size checks), `messages`
(one-line failure texts) and `pytest_suite`.

Gymnasium is imported lazily (through `platform_contracts.spaces`).
"""

from __future__ import annotations

from platform_contracts.compliance.checks import CHECKS, run_all, run_check
from platform_contracts.compliance.checks import check_invalid_action as check_invalid_action
from platform_contracts.compliance.checks import check_observations as check_observations
from platform_contracts.compliance.checks import check_render as check_render
from platform_contracts.compliance.checks import check_seeding as check_seeding
from platform_contracts.compliance.checks import check_snapshot as check_snapshot
from platform_contracts.compliance.checks import check_spec as check_spec
from platform_contracts.compliance.checks import check_stepping as check_stepping
from platform_contracts.compliance.pytest_suite import EnvironmentComplianceTests
from platform_contracts.compliance.results import CheckFailed as CheckFailed
from platform_contracts.compliance.results import CheckResult, ComplianceOptions, Connection

__all__ = [
    "CHECKS",
    "CheckResult",
    "ComplianceOptions",
    "Connection",
    "EnvironmentComplianceTests",
    "run_all",
    "run_check",
]
