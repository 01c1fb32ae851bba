"""The Comparisons pages in a real browser against the real platform.

A comparison document like `python -m platform_sdk.agents.compare` makes (two agents on the
Panda reach with a mass change and its return, one agent's run recorded: a real CartPole
recording stands in for it) is stored through `POST /v0/comparisons`; the list shows it, its
page has one row per agent with its measures, a link to the recorded agent's replay that opens
it, and one uPlot chart with a line per agent (its legend naming them), the changes marked and
the recoveries shaded, checked on the canvas's pixels; an unknown id says so. Over seeds: each
measure's mean and range and the replays by seed. The side-by-side replay: every agent's recorded
frame at one shared step (a slider, a click on the chart, play), a shorter run's last frame kept
with its end said, a run without frames said.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import platform_sdk
import pytest
from platform_testing.platform import clean_env
from platform_testing.waiting import wait_for
from playwright.sync_api import Page, expect

WINDOW, FIRST, STEPS = 50, 200, 6000
CHANGES = [{"at": 2200, "change": "mass", "body": "hand", "scale": 2.0},
           {"at": 4200, "change": "mass", "body": "hand", "scale": 1.0}]
COLORS = {"adaptive": (0x24, 0x57, 0xD6), "fixed": (0xD6, 0x6A, 0x24)}  # the page's first two agent colours


def windows(drop: float, recover_after: int | None) -> list[dict[str, Any]]:
    """Window means of a run: level -0.3, after 2200 a drop back within `recover_after` steps
    (never when None), and -0.3 again after 4200."""
    out = []
    for step in range(FIRST, FIRST + STEPS - WINDOW + 1, WINDOW):
        mean = -0.3 + 0.02 * math.sin(step / 300)
        if 2200 <= step < 4200 and (recover_after is None or step < 2200 + recover_after):
            mean -= drop
        out.append({"step": step, "mean": round(mean, 4)})
    return out


def agent(name: str, recording_id: str | None, recovery: dict[str, Any], retention: float, compute_s: float,
          success: float, drop: float) -> dict[str, Any]:
    return {
        "name": name, "agent": f"my_agent:{name}", "load": None, "session_id": recording_id or "s-not-kept",
        "recording_id": recording_id, "steps": STEPS, "episodes": 30,
        "measures": {
            "success": success, "success_of": "episodes", "compute_s": compute_s,
            "recovery": [{"at": 2200, "changes": CHANGES[:1], "before": -0.3, **recovery},
                         {"at": 4200, "changes": CHANGES[1:], "before": -0.32, "steps": 0, "worst": -0.3,
                          "recovered": True, "too_close": False}],
            "retention": [{"at": 4200, "returns_to": FIRST, "before": -0.3, "after": -0.3 * (2 - retention),
                           "retention": retention, "too_close": False}],
        },
        "reward_windows": windows(drop, recovery["steps"]),
    }


@pytest.fixture(scope="module")
def http(web_platform) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web_platform.url, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def recording_id(web_platform, http: httpx.Client) -> str:
    """A closed recording of one CartPole episode (the recorded agent's run stands for it)."""
    with platform_sdk.connect("cartpole", url=web_platform.url, record=True) as env:
        sid = env.session_id
        env.reset(seed=3)
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(0)
            done = terminated or truncated
    wait_for(lambda: http.get(f"/v0/recordings/{sid}").json().get("status") == "closed", timeout=60,
             what=f"recording {sid} closed")
    return sid


@pytest.fixture(scope="module")
def comparison(http: httpx.Client, recording_id: str) -> dict[str, Any]:
    document = {
        "env": "menagerie-franka-emika-panda-reach", "kwargs": {"world_changes": CHANGES}, "world_changes": CHANGES,
        "warmup": FIRST, "steps": STEPS, "window": WINDOW, "seed": 0, "snapshot_id": "snap-0123456789ab",
        "first_step": FIRST,
        "agents": [
            agent("adaptive", recording_id, {"steps": 300, "worst": -0.812, "recovered": True, "too_close": False},
                  retention=0.98, compute_s=0.0021, success=0.6, drop=0.5),
            agent("fixed", None, {"steps": None, "worst": -1.1, "recovered": False, "too_close": False},
                  retention=0.9, compute_s=0.00004, success=0.25, drop=0.8),
        ],
    }
    stored = http.post("/v0/comparisons", json=document)
    assert stored.status_code == 201, stored.text
    return stored.json()


def colour_pixels(page: Page) -> dict[str, int]:
    """How many pixels of the chart's canvas (transparent where nothing is drawn) are each
    agent's colour: opaque (its line), or at the shading's 18% alpha (its recovery)."""
    return page.evaluate(
        """(colors) => {
            const canvas = document.querySelector('[data-testid="comparison-chart"] canvas');
            const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
            const out = {};
            for (const [name, [r, g, b]] of Object.entries(colors)) {
                let line = 0, shade = 0;
                for (let i = 0; i < data.length; i += 4) {
                    const hue = Math.abs(data[i] - r) <= 24 && Math.abs(data[i + 1] - g) <= 24
                        && Math.abs(data[i + 2] - b) <= 24;
                    if (hue && data[i + 3] > 200) line++;
                    else if (hue && Math.abs(data[i + 3] - 0.18 * 255) <= 4) shade++;
                }
                out[name + '.line'] = line;
                out[name + '.shade'] = shade;
            }
            return out;
        }""",
        COLORS,
    )


def test_the_list_links_to_the_comparison(page: Page, comparison: dict[str, Any]) -> None:
    cid = comparison["id"]
    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Comparisons").click()
    expect(page).to_have_url(re.compile(r"/comparisons$"))
    row = page.get_by_test_id(f"comparison-row-{cid}")
    expect(row).to_be_visible()
    expect(page.get_by_test_id(f"env-{cid}")).to_have_text("menagerie-franka-emika-panda-reach")
    expect(page.get_by_test_id(f"agents-{cid}")).to_have_text("adaptive, fixed")
    expect(page.get_by_test_id(f"steps-{cid}")).to_have_text(str(STEPS))
    expect(page.get_by_test_id(f"window-{cid}")).to_have_text(str(WINDOW))
    page.get_by_test_id(f"open-{cid}").click()
    expect(page).to_have_url(re.compile(f"/comparisons/{cid}$"))
    expect(page.get_by_test_id("comparison-title")).to_have_text(
        "adaptive vs fixed on menagerie-franka-emika-panda-reach")


def test_the_page_shows_each_agent_its_replay_and_the_chart(
    page: Page, comparison: dict[str, Any], recording_id: str, screenshot,
) -> None:
    page.goto(f"/comparisons/{comparison['id']}")
    expect(page.get_by_test_id("agents-table").locator("tbody tr")).to_have_count(2)
    expect(page.get_by_test_id("change-0")).to_have_text('at session step 2200: mass (body="hand", scale=2)')
    expect(page.get_by_test_id("change-1")).to_have_text('at session step 4200: mass (body="hand", scale=1)')

    expect(page.get_by_test_id("success-adaptive")).to_have_text("60% of episodes")
    expect(page.get_by_test_id("recovery-adaptive-0")).to_have_text("at 2200: 300 steps (worst -0.812)")
    expect(page.get_by_test_id("recovery-adaptive-1")).to_have_text("at 4200: 0 steps (worst -0.300)")
    expect(page.get_by_test_id("retention-adaptive")).to_have_text("at 4200 (the world of step 200): 0.980")
    expect(page.get_by_test_id("compute-adaptive")).to_have_text("2.100 ms")
    expect(page.get_by_test_id("episodes-adaptive")).to_have_text("30")
    expect(page.get_by_test_id("steps-adaptive")).to_have_text(str(STEPS))
    expect(page.get_by_test_id("success-fixed")).to_have_text("25% of episodes")
    expect(page.get_by_test_id("recovery-fixed-0")).to_have_text("at 2200: not recovered (worst -1.100)")
    expect(page.get_by_test_id("compute-fixed")).to_have_text("0.040 ms")
    expect(page.get_by_test_id("agent-row-fixed")).to_contain_text("not recorded")
    expect(page.get_by_test_id("replay-fixed")).to_have_count(0)
    link = page.get_by_test_id("replay-adaptive")
    expect(link).to_have_attribute("href", f"/recordings/{recording_id}")

    chart = page.get_by_test_id("comparison-chart")
    expect(chart).to_have_attribute("data-series", "2")
    expect(chart).to_have_attribute("data-changes", "2")
    expect(chart).to_have_attribute("data-bands", "1")  # adaptive's recovery at 2200 (the fixed one never recovered)
    expect(chart.locator("canvas")).to_have_count(1)
    legend = chart.locator(".u-legend .u-series")
    expect(legend).to_have_count(3)  # the step, then one per agent
    expect(legend.nth(1)).to_contain_text("adaptive")
    expect(legend.nth(2)).to_contain_text("fixed")
    pixels = colour_pixels(page)
    assert pixels["adaptive.line"] > 300 and pixels["fixed.line"] > 300, pixels
    assert pixels["adaptive.shade"] > 1000, pixels  # 300 steps of the plot's height, in its colour
    assert pixels["fixed.shade"] < 50, pixels
    expect(page.get_by_test_id("side-return-adaptive")).to_have_text("1")  # its side-by-side lane, loaded
    chart.scroll_into_view_if_needed()
    screenshot(page, "comparison", full_page=True)

    link.click()
    expect(page).to_have_url(re.compile(f"/recordings/{recording_id}$"))
    expect(page.get_by_test_id("plot-reward")).to_be_visible()


def test_an_unknown_comparison_says_so(page: Page, console, web_platform) -> None:
    console.allow(r"Failed to load resource: .* 404")
    page.goto("/comparisons/cmp-000000000000")
    expect(page.get_by_test_id("comparison-error")).to_have_text("comparison 'cmp-000000000000' not found")


def test_a_comparison_over_seeds_shows_each_measures_mean_and_range_and_the_replays_by_seed(
        page: Page, http: httpx.Client, recording_id: str, screenshot) -> None:
    def run(seed: int, success: float, recovery_steps: int, recorded: str | None) -> dict[str, Any]:
        entry = agent("x", recorded, {"steps": recovery_steps, "worst": -0.8, "recovered": True, "too_close": False},
                      retention=0.9, compute_s=0.002, success=success, drop=0.5)
        return {"seed": seed, "snapshot_id": f"snap-00000000000{seed}",
                **{k: v for k, v in entry.items() if k not in ("name", "agent", "load")}}

    runs = {"steady": [run(0, 0.5, 100, recording_id), run(1, 0.75, 300, None)],
            "shaky": [run(0, 0.25, 200, None), run(1, 0.25, 200, None)]}
    agents = [{**runs[name][0], "name": name, "agent": f"my_agent:{name}", "load": None, "runs": runs[name]}
              for name in runs]
    for entry in agents:
        entry.pop("seed")
    document = {"env": "cartpole", "kwargs": {"world_changes": CHANGES}, "world_changes": CHANGES, "warmup": FIRST,
                "steps": STEPS, "window": WINDOW, "seed": 0, "seeds": [0, 1], "first_step": FIRST, "agents": agents}
    stored = http.post("/v0/comparisons", json=document)
    assert stored.status_code == 201, stored.text
    page.goto(f"/comparisons/{stored.json()['id']}")
    expect(page.get_by_test_id("seeds-panel")).to_contain_text("Over 2 seeds")
    expect(page.get_by_test_id("seed-spread-steady-0")).to_have_text("0.625 (0.500–0.750)")  # success
    expect(page.get_by_test_id("seed-spread-shaky-0")).to_have_text("0.250")  # the same in both runs
    expect(page.get_by_test_id("seed-spread-steady-2")).to_have_text("200.0 (100.0–300.0)")  # recovery at 2200
    expect(page.get_by_test_id("seed-replays-1")).to_contain_text("steady (not recorded)")
    expect(page.get_by_test_id("side-return-steady")).to_have_text("1")  # seed 0's side-by-side lane, loaded
    screenshot(page, "comparison-seeds", full_page=True)
    page.get_by_test_id("seed-replay-0-steady").click()
    expect(page).to_have_url(re.compile(f"/recordings/{recording_id}$"))


def recorded_run(web_platform, http: httpx.Client, policy, frames: bool = True) -> tuple[str, int]:
    """A closed CartPole recording of one episode played by `policy(step)`, and its length."""
    with platform_sdk.connect("cartpole", url=web_platform.url, record=True, record_frames=frames) as env:
        sid = env.session_id
        env.reset(seed=3)
        done, length = False, 0
        while not done:
            _, _, terminated, truncated, _ = env.step(policy(length))
            length += 1
            done = terminated or truncated
    wait_for(lambda: http.get(f"/v0/recordings/{sid}").json().get("status") == "closed", timeout=60,
             what=f"recording {sid} closed")
    return sid, length


def test_the_side_by_side_replay_shows_every_agent_at_the_shared_step(
        page: Page, web_platform, http: httpx.Client, screenshot) -> None:
    """Four agents from one moment: `left` pushes left and falls first, `sway` sways for 16 steps
    before it pushes left, `blind` was recorded without frames, `absent` not recorded at all."""
    left, left_steps = recorded_run(web_platform, http, lambda i: 0)
    sway, sway_steps = recorded_run(web_platform, http, lambda i: i % 2 if i < 16 else 0)
    blind, blind_steps = recorded_run(web_platform, http, lambda i: 0, frames=False)
    assert left_steps + 4 <= sway_steps, (left_steps, sway_steps)
    first, window = 100, 2

    def entry(name: str, recording: str | None, steps: int) -> dict[str, Any]:
        return {"name": name, "agent": f"my_agent:{name}", "recording_id": recording, "steps": steps, "episodes": 1,
                "measures": {"success": None, "compute_s": 0.001, "recovery": [], "retention": []},
                "reward_windows": [{"step": s, "mean": 1.0} for s in range(first, first + steps - window + 1, window)]}

    document = {"env": "cartpole", "warmup": first, "first_step": first, "steps": sway_steps, "window": window,
                "seed": 3, "agents": [entry("left", left, left_steps), entry("sway", sway, sway_steps),
                                      entry("blind", blind, blind_steps), entry("absent", None, sway_steps)]}
    stored = http.post("/v0/comparisons", json=document)
    assert stored.status_code == 201, stored.text
    page.goto(f"/comparisons/{stored.json()['id']}")

    panel = page.get_by_test_id("side-by-side")
    expect(panel).to_be_visible()
    cursor = page.get_by_test_id("side-cursor")
    expect(cursor).to_have_attribute("min", str(first))
    expect(cursor).to_have_attribute("max", str(first + sway_steps - 1))  # the longest run's last step
    frames = {name: page.get_by_test_id(f"side-frame-{name}") for name in ("left", "sway")}
    for frame in frames.values():  # session step 100 is each agent's first step
        expect(frame).to_have_attribute("data-frame-step", "1")
    expect(page.get_by_test_id("side-no-frames-blind")).to_contain_text("Recorded without frames")
    expect(page.get_by_test_id("side-reward-blind")).to_have_text("1")
    expect(page.get_by_test_id("side-not-recorded-absent")).to_be_visible()
    shown = {name: frame.get_attribute("src") for name, frame in frames.items()}

    def move_to(step: int) -> None:
        cursor.fill(str(step))
        expect(page.get_by_test_id("side-step")).to_have_attribute("data-step", str(step))
        expect(page.get_by_test_id("comparison-chart")).to_have_attribute("data-cursor", str(step))

    move_to(first + 5)  # each agent's 6th step: a new frame for both
    for name, frame in frames.items():
        expect(frame).to_have_attribute("data-frame-step", "6")
        expect(frame).to_have_attribute("data-loading", "false")
        assert frame.get_attribute("src") != shown[name], name
        expect(page.get_by_test_id(f"side-where-{name}")).to_have_text(
            f"episode 0, step 6 of {left_steps if name == 'left' else sway_steps}")
        expect(page.get_by_test_id(f"side-return-{name}")).to_have_text("6")
    expect(page.get_by_test_id("side-open-sway")).to_have_attribute("href", f"/recordings/{sway}?episode=0&step=6")

    move_to(first + left_steps - 1)  # left's last step: its episode ends there
    expect(page.get_by_test_id("side-ended-left")).to_have_text("episode 0 ends here (terminated)")
    expect(page.get_by_test_id("side-ended-sway")).to_have_count(0)

    move_to(first + left_steps + 3)  # past left's run: it keeps its last frame and says so; sway goes on
    expect(frames["left"]).to_have_attribute("data-frame-step", str(left_steps))
    expect(page.get_by_test_id("side-ended-left")).to_have_text(f"its run ended after {left_steps} steps: "
                                                                "showing its last frame")
    expect(page.get_by_test_id("side-reward-left")).to_have_text("–")  # no step of left's at this moment
    expect(page.get_by_test_id("side-return-left")).to_have_text(str(left_steps))
    expect(frames["sway"]).to_have_attribute("data-frame-step", str(left_steps + 4))
    expect(page.get_by_test_id("side-reward-sway")).to_have_text("1")
    expect(page.get_by_test_id("side-ended-sway")).to_have_count(0)
    screenshot(page, "comparison-side-by-side", full_page=True)

    move_to(first + sway_steps - 1)  # sway's last step
    expect(frames["left"]).to_have_attribute("data-frame-step", str(left_steps))
    expect(frames["sway"]).to_have_attribute("data-frame-step", str(sway_steps))
    expect(page.get_by_test_id("side-ended-sway")).to_have_text("episode 0 ends here (terminated)")
    expect(page.get_by_test_id("side-return-left")).to_have_text(str(left_steps))

    # a click on the reward chart moves the shared cursor there
    chart = page.get_by_test_id("comparison-chart").locator(".u-over")
    box = chart.bounding_box()
    assert box is not None
    chart.click(position={"x": 2, "y": box["height"] / 2})
    expect(page.get_by_test_id("side-step")).to_have_attribute("data-step", re.compile(r"^10[0-2]$"))

    # play moves every agent on together
    page.get_by_test_id("side-play").click()
    expect(frames["sway"]).to_have_attribute("data-frame-step", re.compile(r"^([5-9]|\d\d+)$"), timeout=15_000)
    page.get_by_test_id("side-play").click()


CARTPOLE_AGENTS = """
from platform_sdk.agents.builtin import ScriptedAgent


def push_left(**settings):
    return ScriptedAgent(action=0)


def sway(**settings):
    return ScriptedAgent(actions=[0, 1])
"""


def test_a_real_compare_run_side_by_side_places_each_agent_in_its_own_episodes(
        page: Page, console, web_platform, http: httpx.Client, tmp_path) -> None:
    """`compare --record --seeds 2` on CartPole: `left` falls every ten steps or so (episode after
    episode, auto-reset), `sway` balances longer; each recording begins with the snapshot's
    restore. At one session step each lane shows the episode and step its own
    episodes' lengths put it at, for the seed chosen."""
    (tmp_path / "cartpole_agents.py").write_text(CARTPOLE_AGENTS)
    warmup, steps = 5, 40
    done = subprocess.run(
        [sys.executable, "-m", "platform_sdk.agents.compare", "--env", "cartpole", "--agent",
         "left=cartpole_agents:push_left", "--agent", "sway=cartpole_agents:sway", "--warmup", str(warmup),
         "--steps", str(steps), "--window", "5", "--seeds", "2", "--record"],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
        env={**clean_env(), "PLATFORM_URL": web_platform.url})
    assert done.returncode == 0, done.stderr
    comparison_id = json.loads(done.stdout.strip().splitlines()[-1])["comparison_id"]
    document = http.get(f"/v0/comparisons/{comparison_id}").json()
    first = document["first_step"]
    recordings = {agent["name"]: agent["runs"][1]["recording_id"] for agent in document["agents"]}  # seed 1's
    for rid in recordings.values():
        wait_for(lambda rid=rid: http.get(f"/v0/recordings/{rid}").json().get("status") == "closed", timeout=60,
                 what=f"recording {rid} closed")

    def where(name: str, action: int) -> tuple[int, int]:
        """The episode and step of the run's `action`-th action, from its recording's episodes."""
        before = 0
        for episode in sorted(http.get(f"/v0/recordings/{recordings[name]}").json()["episodes"],
                              key=lambda e: e["index"]):
            if action <= before + episode["length"]:
                return episode["index"], action - before
            before += episode["length"]
        raise AssertionError(f"{name} took fewer than {action} steps")

    # a restore records no frame: its row 0, prefetched near the first step, is a 404 once, then skipped
    console.allow(r"Failed to load resource: .* status of 404")
    page.goto(f"/comparisons/{comparison_id}")
    page.get_by_test_id("side-seed").select_option("1")
    cursor = page.get_by_test_id("side-cursor")
    expect(cursor).to_have_attribute("max", str(first + steps - 1))
    for action in (1, 23, steps):
        cursor.fill(str(first + action - 1))
        for name in ("left", "sway"):
            episode, step = where(name, action)
            frame = page.get_by_test_id(f"side-frame-{name}")
            expect(frame).to_have_attribute("data-episode", str(episode))
            expect(frame).to_have_attribute("data-frame-step", str(step))
            expect(page.get_by_test_id(f"side-open-{name}")).to_have_attribute(
                "href", f"/recordings/{recordings[name]}?episode={episode}&step={step}")
    assert where("left", 23)[0] > 0, "left fell and began a new episode before its 23rd step"
    assert where("left", 23) != where("sway", 23), "the same moment is elsewhere in each agent's episodes"
