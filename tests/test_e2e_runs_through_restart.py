"""A training run logged while the platform's gateway is killed and started again keeps every
point, once: `platform_sdk.runs` queues what it cannot send, tries again, and sends under the
run's own id, so nothing is lost or doubled (docs/training.md, "Logging from Python")."""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Iterator

import httpx
import pytest
from platform_sdk.runs import Run
from platform_testing.platform import PlatformStack, running_platform

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    with running_platform(tmp_path_factory.mktemp("runs-restart") / "platform") as stack:
        yield stack


def test_points_logged_while_the_gateway_is_down_arrive_once(stack: PlatformStack, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="platform_sdk.runs")
    run = Run("through-a-restart", url=stack.url, flush_every=0.1, hparams={"lr": 0.1})
    for step in range(100):
        run.log({"loss": 1.0 / (step + 1), "score": float(step)}, step=step)
    assert run.flush(timeout=30)

    stack.kill("gateway", signal.SIGKILL)
    for step in range(100, 200):
        run.log({"loss": 1.0 / (step + 1), "score": float(step)}, step=step)
    run.update(summary={"best": 199.0})
    time.sleep(1.0)  # the sender tries, fails, and keeps the points
    assert not run.flush(timeout=0.5)
    stack.start_service("gateway")
    assert run.finish(timeout=120)

    http = httpx.Client(base_url=stack.url, timeout=30)
    stored = http.get(f"/v0/runs/{run.id}").json()
    assert (stored["state"], stored["summary"], stored["hparams"]) == ("finished", {"best": 199.0}, {"lr": 0.1})
    series = http.get(f"/v0/runs/{run.id}/metrics").json()["series"]
    assert series["score"]["step"] == list(range(200)) and series["score"]["value"] == [float(s) for s in range(200)]
    assert len(series["loss"]["step"]) == 200
    said = [record.getMessage() for record in caplog.records]
    assert any("kept and sent when it is back" in line for line in said), said
    assert any("is back after" in line for line in said), said
