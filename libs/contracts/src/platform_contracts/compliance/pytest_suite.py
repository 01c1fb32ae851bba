"""`EnvironmentComplianceTests`: the checks as an abstract pytest class."""

from __future__ import annotations

from platform_contracts.compliance.checks import run_check
from platform_contracts.compliance.results import ComplianceOptions, Connection


class EnvironmentComplianceTests:
    """Abstract pytest tests: subclass it (as `Test...`) and supply a `connection` fixture."""

    compliance_options = ComplianceOptions()

    def _assert(self, name: str, connection: Connection) -> None:
        result = run_check(name, connection, self.compliance_options)
        assert result.passed, f"{name}: {result.message}"

    def test_spec(self, connection: Connection) -> None:
        self._assert("spec", connection)

    def test_observations(self, connection: Connection) -> None:
        self._assert("observations", connection)

    def test_stepping(self, connection: Connection) -> None:
        self._assert("stepping", connection)

    def test_invalid_action(self, connection: Connection) -> None:
        self._assert("invalid_action", connection)

    def test_seeding(self, connection: Connection) -> None:
        self._assert("seeding", connection)

    def test_snapshot(self, connection: Connection) -> None:
        self._assert("snapshot", connection)

    def test_render(self, connection: Connection) -> None:
        self._assert("render", connection)
