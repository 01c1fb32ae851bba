"""`make run`'s defaults in Chromium: `platform-server` run as a user runs it (no PLATFORM_POOLS
set) keeps warm pools, and Start on CartPole's card gets a warm instance, not a process start.

The launcher runs as a real process with its defaults, except that previews are not made ahead
(PLATFORM_WARM_PREVIEWS empty: making every catalog entry's preview would load the machine for
minutes under the other tests) and the gateway's cache is the test's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from platform_local.launcher_defaults import DEFAULT_POOLS
from platform_local.local_platform import free_port
from platform_testing.waiting import wait_for
from playwright.sync_api import Page

BANNER = "Simulusion is running at"


class Launcher:
    """`python -m platform_local` with a clean environment (no PLATFORM_* of the caller's)."""

    def __init__(self, root: Path, web_dist: Path) -> None:
        self.root = root
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLATFORM_")}
        env.update(PLATFORM_DATA_DIR=str(root / "data"), PLATFORM_RECORDINGS=str(root / "recordings"),
                   PLATFORM_PORT=str(self.port), PLATFORM_WEB_DIST=str(web_dist),
                   PLATFORM_CACHE_DIR=str(root / "cache"), PLATFORM_WARM_PREVIEWS="")
        self.output = (root / "launcher.out").open("w")
        self.process = subprocess.Popen([sys.executable, "-m", "platform_local"], env=env, cwd=root,
                                        stdin=subprocess.DEVNULL, stdout=self.output, stderr=subprocess.STDOUT)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def said(self) -> str:
        return (self.root / "launcher.out").read_text()

    def log(self, service: str) -> str:
        path = self.root / "data" / "logs" / f"{service}.log"
        return path.read_text() if path.exists() else ""

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.output.close()


@pytest.fixture(scope="module")
def launcher(web_dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launcher]:
    running = Launcher(tmp_path_factory.mktemp("make-run-defaults"), web_dist)
    try:
        wait_for(lambda: BANNER in running.said() or running.process.poll() is not None, timeout=120,
                 what="the launcher's banner")
        assert BANNER in running.said(), running.said()
        yield running
    finally:
        running.stop()


def full_pools(launcher: Launcher) -> set[str]:
    """The default pools the broker has said are full."""
    broker = launcher.log("broker")
    return {env_id for env_id, count in DEFAULT_POOLS.items()
            if re.search(rf"pool {re.escape(env_id)}: pool-{re.escape(env_id)}-[0-9a-f]+ warm on env host \S+ "
                         rf"\({count}/{count}\)", broker)}


def test_make_run_keeps_the_default_pools_and_start_on_cartpole_gets_a_warm_instance(
        launcher: Launcher, open_page, screenshot) -> None:
    assert "Warming instances in the background (PLATFORM_POOLS=cartpole=2," in launcher.said()
    wait_for(lambda: full_pools(launcher) == set(DEFAULT_POOLS), timeout=180,
             what=f"every default pool to be warm ({', '.join(DEFAULT_POOLS)})")

    page: Page = open_page(launcher.url)
    page.goto("/?q=cartpole")
    page.get_by_test_id("start-cartpole").click()
    page.wait_for_url(re.compile(r"/sessions/[^/?]+"))
    frame = page.get_by_test_id("frame")
    frame.wait_for()
    wait_for(lambda: frame.evaluate("img => img.complete && img.naturalWidth > 0"), timeout=30,
             what="the first frame to be drawn")
    session_id = page.url.split("/sessions/")[1].split("?")[0]
    claim = re.search(rf"session {session_id} \(cartpole\) claimed pool instance (pool-cartpole-[0-9a-f]+)",
                      launcher.log("envhost"))
    assert claim is not None, "the session took a warm instance instead of starting a process"
    screenshot(page, "first-frame-cartpole")
    page.get_by_test_id("close-session").click()
