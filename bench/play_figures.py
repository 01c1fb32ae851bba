"""The Session page in a real browser (Debian's Chromium through Playwright): first frame, play.

Starts a platform with a warm CartPole pool, serving the built web app (scripts/build_web.py
builds it when its sources changed), and measures, each against a baseline taken in the same run:

- Start to first frame: clicking Start on CartPole's card until its first frame is on screen,
  against the SDK doing the same (`connect`, `reset`, `render`) on the same warm pool.
- Pong at its control rate: frames shown per second while the Session page plays, in the first
  and the second half of the window (no growing backlog: both halves alike), against
  `metadata.control_rate`.

- `--make-run`: clicking Start on CartPole's and on Pong's card until the first frame is on
  screen, on `platform-server` (what `make run` starts) with its default warm pools, against the
  same launcher with PLATFORM_POOLS empty (every session starts a process), both in this run.
  Previews of the two are made ahead (PLATFORM_WARM_PREVIEWS=cartpole,pong) as `make run`'s
  would be after its first start, and every round waits for the pools to refill.

The Replay page's figures are bench/replay_figures.py's.

    uv run python bench/play_figures.py [--rounds 5] [--play-seconds 10] [--make-run]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bench_platform import platform_url

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("PLATFORM_CHROMIUM") or "/usr/bin/chromium"
FRAME_LOADED = """(sel) => { const img = document.querySelector(sel);
  return img !== null && img.complete && img.naturalWidth > 0; }"""
# Counts the frames the Session page puts on screen: every load of the picture's <img>.
COUNT_FRAMES = """() => { window.__frames = []; const seen = new WeakSet();
  const watch = () => { const img = document.querySelector('[data-testid=frame]');
    if (img && !seen.has(img)) { seen.add(img);
      img.addEventListener('load', () => window.__frames.push(performance.now())); } };
  watch(); new MutationObserver(watch).observe(document.body, {subtree: true, childList: true}); }"""


def spread(values: list[float], scale: float = 1.0, unit: str = "ms") -> str:
    return (f"median {statistics.median(values) * scale:,.0f} {unit} "
            f"(min {min(values) * scale:,.0f}, max {max(values) * scale:,.0f}, n={len(values)})")


def sdk_first_frame_s(url: str) -> float:
    import platform_sdk

    start = time.perf_counter()
    with platform_sdk.connect("cartpole", url=url) as env:
        env.reset(seed=0)
        env.render()
        return time.perf_counter() - start


def browser_first_frame_s(browser, url: str, env_id: str = "cartpole") -> float:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{url}/?q={env_id}")
    start_button = page.get_by_test_id(f"start-{env_id}")
    start_button.wait_for()
    start = time.perf_counter()
    start_button.click()
    page.wait_for_function(FRAME_LOADED, arg="[data-testid=frame]", timeout=30_000, polling="raf")
    elapsed = time.perf_counter() - start
    page.get_by_test_id("close-session").click()
    page.close()
    return elapsed


def first_frame(browser, url: str, rounds: int) -> None:
    browser_times, sdk_times = [], []
    for _ in range(rounds):  # alternating, with time for the pool to refill
        browser_times.append(browser_first_frame_s(browser, url))
        time.sleep(3)
        sdk_times.append(sdk_first_frame_s(url))
        time.sleep(3)
    print(f"start to first frame, browser (warm pool): {spread(browser_times, 1000)}")
    print(f"first frame, SDK (baseline, warm pool):    {spread(sdk_times, 1000)}")
    print(f"  browser / SDK: {statistics.median(browser_times) / statistics.median(sdk_times):.2f}x; "
          f"target <= 1 s: {'met' if statistics.median(browser_times) <= 1.0 else 'NOT met'}")


def pong_play(browser, url: str, seconds: float) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{url}/?q=pong")
    page.get_by_test_id("start-pong").click()
    page.wait_for_function(FRAME_LOADED, arg="[data-testid=frame]", timeout=60_000)
    session_id = page.url.rstrip("/").split("/")[-1]
    import json

    with urllib.request.urlopen(f"{url}/v0/sessions/{session_id}") as answer:
        rate = float(json.load(answer)["metadata"].get("control_rate") or 30)
    page.evaluate(COUNT_FRAMES)
    page.get_by_test_id("play").click()
    time.sleep(seconds)
    page.get_by_test_id("pause").click()
    shown = page.evaluate("window.__frames")
    steps_text = page.get_by_test_id("step-count").inner_text()
    page.get_by_test_id("close-session").click()
    page.close()
    if len(shown) < 4:
        print(f"pong: only {len(shown)} frames shown in {seconds} s")
        return
    first, last = shown[0], shown[-1]
    middle = (first + last) / 2
    halves = [sum(1 for t in shown if t < middle), sum(1 for t in shown if t >= middle)]
    span_s = (last - first) / 1000
    fps = (len(shown) - 1) / span_s
    half_fps = [n / (span_s / 2) for n in halves]
    print(f"pong at its control rate ({rate:g}/s): {fps:.1f} frames shown/s over {span_s:.1f} s "
          f"(halves {half_fps[0]:.1f} and {half_fps[1]:.1f}/s), step count shown {steps_text}")
    print(f"  shown / control rate: {fps / rate:.2f}; second half / first half: {half_fps[1] / half_fps[0]:.2f} "
          "(1.00: no growing backlog)")


@contextmanager
def launcher_url(pools: str | None) -> Iterator[str]:
    """`python -m platform_local` as `make run` runs it, in a temporary folder; `pools` None keeps
    its default PLATFORM_POOLS, else sets it. Yields its URL once it answers and, with pools, once
    its broker has said every pool is full."""
    from platform_local.local_platform import free_port

    root = Path(tempfile.mkdtemp(prefix="bench-make-run-"))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLATFORM_")}
    env.update(PLATFORM_DATA_DIR=str(root / "data"), PLATFORM_RECORDINGS=str(root / "recordings"),
               PLATFORM_PORT=str(port), PLATFORM_WEB_DIST=str(REPO / "web" / "dist"),
               PLATFORM_CACHE_DIR=str(root / "cache"), PLATFORM_WARM_PREVIEWS="cartpole,pong")
    if pools is not None:
        env["PLATFORM_POOLS"] = pools
    out = (root / "launcher.out").open("w")
    process = subprocess.Popen([sys.executable, "-m", "platform_local"], env=env, cwd=root,
                               stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: "Simulusion is running at" in (root / "launcher.out").read_text(), 180)
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: len(list((root / "cache" / "previews").glob("*.jpg"))) >= 2, 180)
        time.sleep(1)
        if pools is None:
            wait_until(lambda: pools_full(root), 180)
        yield url
    finally:
        process.terminate()
        process.wait(60)
        out.close()


def wait_until(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {timeout:g} s")
        time.sleep(0.25)


def pools_full(root: Path) -> bool:
    """Whether the broker's log says each default pool is full (its last report per env)."""
    from platform_local.launcher_defaults import DEFAULT_POOLS

    log = (root / "data" / "logs" / "broker.log").read_text()
    last = {m.group(1): (int(m.group(2)), int(m.group(3)))
            for m in re.finditer(r"pool (\S+): \S+ warm on env host \S+ \((\d+)/(\d+)\)", log)}
    return all(last.get(env_id, (0, 1))[0] >= count for env_id, count in DEFAULT_POOLS.items())


def make_run_first_frames(browser, rounds: int) -> None:
    figures: dict[tuple[str, str], list[float]] = {}
    for label, pools in (("no pools (PLATFORM_POOLS=)", ""), ("make run's default pools", None)):
        with launcher_url(pools) as url:
            for env_id in ("cartpole", "pong"):
                browser_first_frame_s(browser, url, env_id)  # unmeasured: the page's first load
                times = figures.setdefault((label, env_id), [])
                for _ in range(rounds):
                    time.sleep(4)  # a claimed pool refills
                    times.append(browser_first_frame_s(browser, url, env_id))
                print(f"{env_id:<9} {label:<28} click Start to first frame: {spread(times, 1000)}", flush=True)
    for env_id in ("cartpole", "pong"):
        cold = statistics.median(figures[("no pools (PLATFORM_POOLS=)", env_id)])
        warm = statistics.median(figures[("make run's default pools", env_id)])
        print(f"{env_id}: default pools / no pools: {warm / cold:.2f}x; target <= 1 s: "
              f"{'met' if warm <= 1.0 else 'NOT met'} ({warm * 1000:,.0f} ms)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="first-frame rounds (browser and SDK alternately)")
    parser.add_argument("--play-seconds", type=float, default=10.0, help="seconds of Pong play")
    parser.add_argument("--make-run", action="store_true",
                        help="only the first frame on make run's defaults against no pools (see above)")
    args = parser.parse_args()
    if not Path(CHROMIUM).is_file():
        print(f"error: Chromium not found at {CHROMIUM}: apt-get install chromium (or set PLATFORM_CHROMIUM)",
              file=sys.stderr)
        return 1
    subprocess.run([sys.executable, str(REPO / "scripts" / "build_web.py"), "--require"], cwd=REPO, check=True)
    from playwright.sync_api import sync_playwright

    if args.make_run:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, headless=True)
            make_run_first_frames(browser, args.rounds)
            browser.close()
        return 0
    env = {"PLATFORM_POOLS": "cartpole=1", "PLATFORM_WEB_DIST": str(REPO / "web" / "dist")}
    with platform_url(None, "play-figures", env) as url, sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, headless=True)
        time.sleep(8)  # the pool's first instance
        first_frame(browser, url, args.rounds)
        pong_play(browser, url, args.play_seconds)
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
