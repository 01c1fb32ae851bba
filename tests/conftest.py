"""The cross-service tests: helpers shared by several of them live beside them (contract_ids.py).
The fixtures are the root conftest's (platform-testing's)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # tests import their helpers (importlib mode)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The modules that take make test's time: each one's setup, call and teardown seconds summed
    (the per-test list of --durations misses a module's fixtures spread over its tests). With xdist
    this runs in the controller, which holds every worker's reports."""
    seconds: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            nodeid, duration = getattr(report, "nodeid", ""), getattr(report, "duration", None)
            if nodeid and isinstance(duration, float):
                module = nodeid.split("::")[0]
                seconds[module] = seconds.get(module, 0.0) + duration
    if len(seconds) < 2:
        return
    terminalreporter.write_sep("=", "seconds per module (setup + call + teardown), the 25 longest")
    for module, total in sorted(seconds.items(), key=lambda item: -item[1])[:25]:
        terminalreporter.write_line(f"{total:8.1f}  {module}")
