"""The Replay page on a 10,000-step episode, in Chromium: plots drawn after opening, a frame
shown after the scrubber stops.

Records one Pendulum episode of 10,000 steps with frames and agent data (about a minute), or
uses `--recording`, then opens its replay in Debian's Chromium (Playwright, headless, 1280x800)
and measures, on the page's own clock (`performance.now()`):

- plots: from navigation start to the reward chart drawn (its uPlot canvas and legend there),
  for `--opens` fresh page loads;
- frame after a scrub: the scrubber is moved through 8 positions 16 ms apart (as a hand drags
  it), then rests at a random step; the time from its last move to that step's frame on screen
  (`replay-frame` of that step, loaded). The episode's first frame (the recorder reads the
  episode's frames once) is timed apart from the others;
- playing: frames shown per second for 4 s at 1x and at 4x the default 30 steps a second, and
  how many steps the frame on screen trails the cursor (no growing backlog).

Targets (issue 15): plots <= 2 s, frame <= 150 ms.

    uv run python bench/replay_figures.py [--url http://127.0.0.1:8000] [--recording s-...]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from bench_platform import add_platform_arguments, platform_url

CHROMIUM = "/usr/bin/chromium"
STEPS = 10_000

SCRUB = """async ([target, path]) => {
  const input = document.querySelector('[data-testid=scrubber]');
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  const move = (v) => { setter.call(input, String(v)); input.dispatchEvent(new Event('input', { bubbles: true })); };
  for (const v of path) { move(v); await new Promise((r) => setTimeout(r, 16)); }
  move(target);
  const stopped = performance.now();
  return await new Promise((resolve) => {
    const check = () => {
      const img = document.querySelector('[data-testid=replay-frame]');
      if (img && img.dataset.frameStep === String(target) && img.dataset.loading === 'false' && img.complete
          && img.naturalWidth > 0) resolve(performance.now() - stopped);
      else requestAnimationFrame(check);
    };
    check();
  });
}"""


def record(url: str) -> str:
    import numpy as np
    import platform_sdk

    print(f"recording a {STEPS:,}-step Pendulum episode with frames ...", flush=True)
    rng = np.random.default_rng(0)
    with platform_sdk.connect("pendulum", url=url, kwargs={"max_episode_steps": STEPS}, record=True,
                              record_frames=True) as env:
        env.reset(seed=0)
        for _ in range(STEPS):
            env.step(rng.uniform(-2, 2, size=(1,)).astype(np.float32), agent={"confidence": float(rng.random())})
        return env.session_id


def wait_closed(url: str, sid: str) -> None:
    import httpx

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        meta = httpx.get(f"{url}/v0/recordings/{sid}", timeout=30).json()
        if meta.get("status") == "closed" and meta.get("episodes"):
            return
        time.sleep(0.5)
    raise SystemExit(f"recording {sid} did not close within 120 s")


WATCH = """() => {
  window.__shown = [];
  const img = () => document.querySelector('[data-testid=replay-frame]');
  const cursor = () => +document.querySelector('[data-testid=cursor-step]').textContent;
  window.__watch = new MutationObserver(() => window.__shown.push([performance.now(), +img().dataset.frameStep, cursor()]));
  window.__watch.observe(img(), { attributes: true, attributeFilter: ['src'] });
}"""


def play(page, speed: str, seconds: float = 4.0) -> tuple[float, int, int]:
    """(frames shown per second, median and largest steps the frame trails the cursor) while playing."""
    page.get_by_test_id("scrubber").fill("3000")
    page.get_by_test_id("speed").select_option(speed)
    page.locator("h1").click()
    page.evaluate(WATCH)
    page.keyboard.press("Space")
    time.sleep(seconds)
    page.keyboard.press("Space")
    shown = page.evaluate("() => { window.__watch.disconnect(); return window.__shown; }")
    if len(shown) < 2:
        return 0.0, 0, 0
    lag = sorted(cursor - step for _, step, cursor in shown)
    return (len(shown) - 1) / ((shown[-1][0] - shown[0][0]) / 1000), lag[len(lag) // 2], lag[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_platform_arguments(parser)
    parser.add_argument("--recording", help="a recording whose episode 0 to open (default: record one)")
    parser.add_argument("--opens", type=int, default=5, help="page loads timed for the plots")
    parser.add_argument("--scrubs", type=int, default=30, help="scrubs timed for the frame")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with platform_url(args.url, "replay") as url:
        sid = args.recording or record(url)
        wait_closed(url, sid)
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, headless=True)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            plots = []
            for _ in range(args.opens):
                page.goto(f"{url}/recordings/{sid}?episode=0&step=0")
                page.wait_for_selector("[data-testid=plot-reward] canvas", state="attached")
                page.wait_for_selector("[data-testid=plot-reward] .u-legend", state="attached")
                plots.append(page.evaluate("performance.now()"))
            steps = int(page.get_by_test_id("episode-length").inner_text().replace(",", ""))
            rng = random.Random(0)

            def scrub() -> float:
                target = rng.randrange(1, steps + 1)
                path = [max(1, min(steps, target + rng.randrange(-400, 400))) for _ in range(8)]
                return page.evaluate(SCRUB, [target, path])

            first = scrub()
            frames = [scrub() for _ in range(args.scrubs)]
            playing = {speed: play(page, speed) for speed in ("1", "4")}
            browser.close()

    print(f"episode: {steps:,} steps (recording {sid})")
    print(f"plots drawn after opening: median {statistics.median(plots):.0f} ms, max {max(plots):.0f} ms "
          f"({len(plots)} loads; target <= 2000 ms)")
    print(f"frame after the scrubber stops: the episode's first {first:.0f} ms; then median "
          f"{statistics.median(frames):.0f} ms, p90 {sorted(frames)[int(0.9 * len(frames)) - 1]:.0f} ms, "
          f"max {max(frames):.0f} ms ({len(frames)} scrubs; target <= 150 ms)")
    for speed, (fps, lag, worst) in playing.items():
        print(f"playing at {speed}x: {fps:.1f} frames shown a second; the frame trails the cursor by "
              f"median {lag}, at most {worst} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
