"""Inspect's log viewer as the gateway serves it (platform_gateway.eval_viewer): the page with
its assets' paths made absolute and the token script first, its files under its own CSP, the
deep link of a sample, the installed build found without importing inspect_ai, and the page
saying how to install it when it is missing. (The viewer reading a real eval's log through the
team guard runs in a browser: tests/web/test_evals_pages.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from platform_gateway.app import api_app
from platform_gateway.eval_viewer import AUTH_SCRIPT_URL, installed_dist, mount, viewer_url

INDEX = ('<!doctype html><html lang="en"><head><meta charset="utf-8" /><link rel="icon" href="./assets/favicon.svg" />'
         '<script type="module" crossorigin src="./assets/index.js"></script></head><body><div id="app"></div></body></html>')
POLICY = {"version": 1, "directives": {"default-src": ["'none'"], "script-src": ["'self'"], "connect-src": ["'self'"]}}


def write_build(dist: Path) -> Path:
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text(INDEX)
    (dist / "assets" / "index.js").write_text("console.log('viewer');\n")
    (dist / "content-security-policy.json").write_text(json.dumps(POLICY))
    return dist


def client_for(dist: Path | None) -> httpx.AsyncClient:
    app = api_app(None)
    mount(app, dist)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")


async def test_the_page_loads_the_viewer_from_one_place_with_the_token_script_first(tmp_path: Path) -> None:
    async with client_for(write_build(tmp_path / "dist")) as web:
        page = await web.get("/v0/evals/ev-0123456789ab/viewer", params={"log_file": "logs/a.eval"})
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        html = page.text
        assert html.index(f'<script src="{AUTH_SCRIPT_URL}"></script>') < html.index("/v0/eval-viewer/assets/index.js")
        assert '"./assets/' not in html and 'href="/v0/eval-viewer/assets/favicon.svg"' in html
        assert page.headers["content-security-policy"] == "default-src 'none'; script-src 'self'; connect-src 'self'"
        assert page.headers["cache-control"] == "no-cache"
        assert (await web.head("/v0/evals/ev-0123456789ab/viewer")).status_code == 200
        script = await web.get("/v0/eval-viewer/assets/index.js")
        assert script.status_code == 200 and script.text == "console.log('viewer');\n"
        assert script.headers["content-type"].startswith("text/javascript")
        assert script.headers["content-security-policy"] == page.headers["content-security-policy"]
        auth = await web.get(AUTH_SCRIPT_URL)
        assert auth.status_code == 200 and '"simulusion.token"' in auth.text and '"/v0/evals/"' in auth.text


async def test_only_the_builds_assets_are_served(tmp_path: Path) -> None:
    dist = write_build(tmp_path / "dist")
    (tmp_path / "secret.txt").write_text("no")
    async with client_for(dist) as web:
        for path in ("/v0/eval-viewer/assets/missing.js", "/v0/eval-viewer/assets/../content-security-policy.json",
                     "/v0/eval-viewer/assets/%2e%2e/%2e%2e/secret.txt"):
            answer = await web.get(path)
            assert answer.status_code == 404 and "no" != answer.text, path


async def test_without_the_viewer_its_page_says_how_to_install_it(tmp_path: Path) -> None:
    async with client_for(tmp_path / "nothing-here") as web:
        page = await web.get("/v0/evals/ev-0123456789ab/viewer")
        assert page.status_code == 503 and "inspect-ai==0.3.285" in page.text
        assert "PLATFORM_EVALS_VIEWER_DIST" in page.text and str(tmp_path) not in page.text
        assert (await web.get("/v0/eval-viewer/assets/index.js")).status_code == 503


def test_a_samples_link_opens_the_viewer_at_its_transcript() -> None:
    assert viewer_url("ev-1", "2026_task_x.eval") == "/v0/evals/ev-1/viewer?log_file=logs/2026_task_x.eval"
    assert viewer_url("ev-1", "2026_task_x.eval", "a b/c", 2) == (
        "/v0/evals/ev-1/viewer?log_file=logs/2026_task_x.eval#/logs/logs/2026_task_x.eval/samples/sample/a%20b%2Fc/2/")


def test_the_installed_viewer_is_found_without_importing_inspect_ai() -> None:
    found = installed_dist()
    assert found is not None and (found / "index.html").is_file() and (found / "assets" / "index.js").is_file()
    code = ("import sys; from platform_gateway.eval_viewer import installed_dist; installed_dist(); "
            "import platform_gateway.app; print('inspect_ai' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


@pytest.mark.parametrize("path", ["/v0/eval-viewer/assets/index.js", AUTH_SCRIPT_URL])
async def test_the_viewers_files_are_not_in_the_api_document(tmp_path: Path, path: str) -> None:
    async with client_for(write_build(tmp_path / "dist")) as web:
        document = (await web.get("/openapi.json")).json()
        assert not any("viewer" in p for p in document["paths"]) and (await web.get(path)).status_code == 200
