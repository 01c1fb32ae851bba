"""Fixtures of the web app's browser tests: a real platform serving a fresh build of web/, and
Debian's Chromium driven headless by Playwright.

    web_dist        web/dist, built by scripts/build_web.py when its sources changed (session)
    web_platform    the whole platform (platform_testing's PlatformStack) serving that build, with
                    tests/web/catalog.toml (the built-ins plus `levels`, tests/web/test_envs.py)
                    and a warm pool of one cartpole instance, ready when the fixture returns (session)
    browser         Chromium headless (/usr/bin/chromium, or PLATFORM_CHROMIUM) (module)
    page            a new page at 1280x800 whose base URL is web_platform's: `page.goto("/")`
    narrow_page     the same on a narrow laptop screen, 1024x640
    open_page       `open_page(base_url, viewport=None)`: another such page, on any platform
    managed_platform  a managed platform that needs a token (PLATFORM_MODE=managed,
                    PLATFORM_AUTH=token) serving that build, its admin token `admin_token` (module)
    signed_in_page  `signed_in_page(path, token=admin_token)`: a page of managed_platform at
                    `path`, signed in by pasting the token on the sign-in page it meets first
    console         the console of the test's pages: the test FAILS on any console error or
                    warning and on any uncaught page error, naming them; `console.allow(regex)`
                    accepts the messages a test provokes on purpose (Chromium logs every 4xx/5xx
                    answer, e.g. "Failed to load resource: ... status of 422")
    screenshot      `screenshot(page, "name")` saves test-output/web/name.png (git-ignored)
    sessions_made_with  `sessions_made_with(name, value)`: the ids of web_platform's sessions, open
                    or closed, made with kwargs[name] == value (to check a refused create made
                    none: counting open sessions races the cards' previews, short sessions too)

A failing test leaves a screenshot of each of its pages as test-output/web/failed-<test>-<n>.png.
Playwright's own browser download is never used (it cannot work here): `make setup` installs
Debian's chromium (scripts/install_system_deps.sh, as root).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.waiting import wait_for

try:
    from playwright.sync_api import (
        Browser, BrowserContext, ConsoleMessage, Error, Page, Playwright, expect, sync_playwright,
    )
except ModuleNotFoundError:  # the workspace's dev group has it: `uv sync --all-packages`
    pytest.fail("the browser tests need the Python package playwright (the workspace's dev group): "
                "run make setup (uv sync --all-packages --frozen)", pytrace=False)

REPO = Path(__file__).resolve().parents[2]
WEB = REPO / "web"
CATALOG = Path(__file__).resolve().parent / "catalog.toml"
OUTPUT = REPO / "test-output" / "web"
CHROMIUM = os.environ.get("PLATFORM_CHROMIUM") or "/usr/bin/chromium"
VIEWPORT = {"width": 1280, "height": 800}
NARROW_VIEWPORT = {"width": 1024, "height": 640}
POOLS = "cartpole=1"
POOL_WARM = re.compile(r"pool cartpole: pool-cartpole-[0-9a-f]+ warm on env host \S+ \(1/1\)")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
MANAGED_ADMIN_TOKEN = "web-admin-token-0123456789abcdef"


@pytest.fixture(scope="session")
def web_dist() -> Path:
    """web/dist, built now when its sources changed (fails, naming Node.js, when it cannot be)."""
    build = subprocess.run([sys.executable, str(REPO / "scripts" / "build_web.py"), "--require"], cwd=REPO,
                           capture_output=True, text=True)
    if build.returncode != 0:
        pytest.fail(f"the web app could not be built (scripts/build_web.py; it needs Node.js 20+):\n"
                    f"{build.stdout}{build.stderr}", pytrace=False)
    return WEB / "dist"


@pytest.fixture(scope="session")
def web_platform(web_dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    """The whole platform serving the fresh build at its `url` (see the module)."""
    extra_env = {"PLATFORM_WEB_DIST": str(web_dist), "PLATFORM_CATALOG": str(CATALOG), "PLATFORM_POOLS": POOLS}
    with running_platform(tmp_path_factory.mktemp("web-platform"), extra_env=extra_env) as stack:
        wait_for(lambda: POOL_WARM.search(stack.log("broker")), timeout=90, what="the cartpole pool to be warm")
        yield stack


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """Chromium headless (module-scoped, so no Playwright event loop outlives the web tests)."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's package as root (apt-get install chromium, "
                    "which make setup does through scripts/install_system_deps.sh) or set PLATFORM_CHROMIUM "
                    "to a Chromium executable", pytrace=False)
    try:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
    except Error as exc:
        pytest.fail(f"Chromium at {CHROMIUM} did not start: {exc.message}", pytrace=False)
    yield launched
    launched.close()


@dataclass
class Console:
    """What the test's pages logged; errors and warnings fail the test unless allowed."""

    messages: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    allowed: list[re.Pattern[str]] = field(default_factory=list)
    pages: list[Page] = field(default_factory=list)

    def allow(self, pattern: str) -> None:
        """Accept console errors and warnings matching `pattern` (re.search) from now on."""
        self.allowed.append(re.compile(pattern))

    def watch(self, page: Page) -> Page:
        page.on("console", self._on_console)
        page.on("pageerror", self._on_page_error)
        self.pages.append(page)
        return page

    def _on_console(self, message: ConsoleMessage) -> None:
        location = message.location
        where = f" ({location.get('url', '')}:{location.get('lineNumber', '')})" if location.get("url") else ""
        line = f"console.{message.type}: {message.text}{where}"
        self.messages.append(line)
        if message.type in ("error", "warning") and not any(p.search(message.text) for p in self.allowed):
            self.problems.append(line)

    def _on_page_error(self, error: Error) -> None:
        line = f"uncaught page error: {error.name}: {error.message}"
        self.messages.append(line)
        if not any(p.search(error.message) for p in self.allowed):
            self.problems.append(line)

    def check(self) -> None:
        """Raises AssertionError naming every console error, warning and page error not allowed."""
        __tracebackhide__ = True
        if self.problems:
            listed = "\n  ".join(self.problems)
            raise AssertionError(f"the page logged {len(self.problems)} console error(s) or warning(s):\n  {listed}")


@pytest.fixture
def console() -> Console:
    return Console()


@pytest.fixture
def open_page(browser: Browser, console: Console) -> Iterator[Callable[..., Page]]:
    """`open_page(base_url, viewport=VIEWPORT)`: a watched page in a fresh context (no cookies
    or storage shared with other tests), on any platform's URL; closed after the test."""
    contexts: list[BrowserContext] = []

    def open_one(base_url: str | None = None, viewport: dict[str, int] | None = None) -> Page:
        context = browser.new_context(viewport=viewport or VIEWPORT, base_url=base_url)
        context.set_default_timeout(15_000)
        contexts.append(context)
        return console.watch(context.new_page())

    yield open_one
    for context in contexts:
        context.close()


@pytest.fixture
def page(open_page: Callable[..., Page], web_platform: PlatformStack) -> Page:
    """A page at 1280x800 on web_platform (relative URLs are the platform's)."""
    return open_page(web_platform.url, VIEWPORT)


@pytest.fixture
def narrow_page(open_page: Callable[..., Page], web_platform: PlatformStack) -> Page:
    """A page on a narrow laptop screen (1024x640) on web_platform."""
    return open_page(web_platform.url, NARROW_VIEWPORT)


@pytest.fixture(scope="session")
def admin_token() -> str:
    return MANAGED_ADMIN_TOKEN


@pytest.fixture(scope="module")
def managed_platform(web_dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra_env = {"PLATFORM_WEB_DIST": str(web_dist), "PLATFORM_MODE": "managed", "PLATFORM_AUTH": "token",
                 "PLATFORM_ADMIN_TOKEN": MANAGED_ADMIN_TOKEN}
    with running_platform(tmp_path_factory.mktemp("managed-platform"), extra_env=extra_env) as stack:
        yield stack


@pytest.fixture
def signed_in_page(open_page: Callable[..., Page], managed_platform: PlatformStack) -> Callable[..., Page]:
    def sign_in(path: str, token: str = MANAGED_ADMIN_TOKEN) -> Page:
        page = open_page(managed_platform.url)
        page.goto(path)
        expect(page.get_by_test_id("sign-in-page")).to_be_visible()
        page.get_by_test_id("sign-in-token").fill(token)
        page.get_by_test_id("sign-in-submit").click()
        expect(page.get_by_test_id("signed-in-as")).to_be_visible()
        return page

    return sign_in


@pytest.fixture
def sessions_made_with(web_platform: PlatformStack) -> Callable[[str, Any], list[str]]:
    def made_with(name: str, value: Any) -> list[str]:
        answer = httpx.get(f"{web_platform.url}/v0/sessions", params={"include_closed": "true"}, timeout=60)
        answer.raise_for_status()
        return [s["id"] for s in answer.json()["data"] if s["kwargs"].get(name) == value]
    return made_with


def save_screenshot(page: Page, name: str, full_page: bool = False) -> Path:
    if not NAME.match(name):
        raise ValueError(f"screenshot name {name!r}: use letters, digits, '-', '_' and '.'")
    OUTPUT.mkdir(parents=True, exist_ok=True)
    path = OUTPUT / f"{name.removesuffix('.png')}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


@pytest.fixture
def screenshot() -> Callable[..., Path]:
    """`screenshot(page, name, full_page=False)`: saves test-output/web/<name>.png, returns its path."""
    return save_screenshot


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """After a test body that passed: fail it when its pages logged errors or warnings."""
    __tracebackhide__ = True
    result = yield
    watched = getattr(item, "funcargs", {}).get("console")
    if isinstance(watched, Console):
        watched.check()
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
    """A failed test's pages, as they were, under test-output/web/failed-<test>-<n>.png."""
    report = yield
    watched = getattr(item, "funcargs", {}).get("console")
    if call.when == "call" and report.failed and isinstance(watched, Console):
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", item.name).strip("-")
        for n, shown in enumerate(watched.pages):
            with contextlib.suppress(Error):  # a page closed or crashed: nothing to show
                save_screenshot(shown, f"failed-{stem}-{n}")
    return report
