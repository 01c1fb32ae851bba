"""The Session page in a real browser (Debian's Chromium through Playwright): first frame, play.

Starts a platform with a warm CartPole pool, serving the built web app (scripts/build_web.py
builds it when its sources changed), and measures, each against a baseline taken in the same run:

- Start to first frame: clicking Start on CartPole's card until its first frame is on screen,
  against the SDK doing the same (`connect`, `reset`, `render`) on the same warm pool.
- Pong at its control rate: frames shown per second while the Session page plays, in the first
  and the second half of the window (no growing backlog: both halves alike), against
  `metadata.control_rate`.

The Replay page's figures are bench/replay_figures.py's.

    uv run python bench/play_figures.py [--rounds 5] [--play-seconds 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import urllib.request
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


def browser_first_frame_s(browser, url: str) -> float:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{url}/?q=cartpole")
    start_button = page.get_by_test_id("start-cartpole")
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="first-frame rounds (browser and SDK alternately)")
    parser.add_argument("--play-seconds", type=float, default=10.0, help="seconds of Pong play")
    args = parser.parse_args()
    if not Path(CHROMIUM).is_file():
        print(f"error: Chromium not found at {CHROMIUM}: apt-get install chromium (or set PLATFORM_CHROMIUM)",
              file=sys.stderr)
        return 1
    subprocess.run([sys.executable, str(REPO / "scripts" / "build_web.py"), "--require"], cwd=REPO, check=True)
    from playwright.sync_api import sync_playwright

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
