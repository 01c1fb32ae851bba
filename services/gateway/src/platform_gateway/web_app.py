"""The web app (web/, built into `PLATFORM_WEB_DIST`) served at `/` next to the API.

One route, added after every API route and matching only what the API does not own:

- `GET`/`HEAD` of a file in the build: `/assets/*` (names carry a content hash, so they are
  cached for a year, `immutable`), any other file revalidated on each use, `index.html` never
  cached (it names the current assets);
- any other `GET`/`HEAD` path: `index.html`, so the app's client-side routes (`/sessions/abc`,
  `/recordings/abc?episode=3`) load the app, which then shows the page or its own "not found";
- a missing `/assets/*` file is a 404 (a stale page asking for an old bundle must not get HTML).

Never matched, so the API keeps its own answers (an unknown `/v0/x` is still the JSON 404, a
wrong method still the 405): `/v0` and below, `/docs`, `/redoc`, `/openapi.json`, `/healthz`, `/metrics`,
and every method but GET and HEAD.

The build is looked up on each request, so building the app while the gateway runs is enough.
Without one (no `index.html` there) the app's paths answer 503 with a short page saying how to
build it: 503 because it is a part of this server that is unavailable until someone builds
it, not a page that does not exist, and neither a browser nor a proxy keeps the answer.

No answer names a path on the server (the build folder is the operator's business: the
gateway's log line says where it is, `where`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

API_PATHS = ("/v0", "/docs", "/redoc", "/openapi.json", "/healthz", "/metrics")
"""Paths (and everything below them) that belong to the API: never the app's."""

ASSETS = "assets/"
INDEX = "index.html"
LONG_CACHE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"

NOT_BUILT_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Simulusion: the web app is not built</title>
<link rel="icon" href="data:,"></head>
<body style="font-family: system-ui, sans-serif; max-width: 42rem; margin: 3rem auto; line-height: 1.5">
<h1>The web app is not built</h1>
<p>The platform runs (its API is at <a href="/docs">/docs</a>), but there is no build of the web
app in the folder <code>PLATFORM_WEB_DIST</code> names (the gateway's log says which).</p>
<p>To build it, install Node.js 20 or newer, then either run <code>make run</code> again (it builds
the app when its sources changed) or build it by hand:</p>
<pre>cd web &amp;&amp; npm ci &amp;&amp; npm run build</pre>
<p>Then reload this page; the gateway needs no restart.</p>
</body>
</html>
"""


def is_api_path(path: str) -> bool:
    """Whether `path` is one of the API's (`API_PATHS` or below one of them)."""
    return any(path == prefix or path.startswith(prefix + "/") for prefix in API_PATHS)


class WebApp:
    """The files of one build folder and how each is answered."""

    def __init__(self, dist: Path) -> None:
        self.dist = Path(dist).absolute()
        self._files = StaticFiles(directory=self.dist, check_dir=False)  # its conditional GET (304)

    @property
    def built(self) -> bool:
        return (self.dist / INDEX).is_file()

    def file(self, relative: str) -> Path | None:
        """The build's file at `relative` (a URL path without its leading '/'), or None: not a
        file, outside the folder, or a hidden name (such as the build's stamp)."""
        if not relative or any(part.startswith(".") for part in relative.split("/")):
            return None
        root = self.dist.resolve()
        candidate = (root / relative).resolve()
        if not candidate.is_relative_to(root) or not candidate.is_file():
            return None
        return candidate

    def answer(self, scope: Scope) -> Response:
        """The answer to a GET or HEAD of a non-API path."""
        if not self.built:
            return HTMLResponse(NOT_BUILT_PAGE, status_code=503,
                                headers={"Cache-Control": "no-store"})
        path = Request(scope).url.path
        relative = path.lstrip("/")
        found = self.file(relative)
        if found is not None and relative != INDEX:
            return self._file(found, LONG_CACHE if relative.startswith(ASSETS) else REVALIDATE, scope)
        if relative.startswith(ASSETS):
            return PlainTextResponse(f"{path} is not in the web app's build: reload the page; "
                                     "if it persists, rebuild the app (make run, or npm run build in web/)",
                                     status_code=404, headers={"Cache-Control": "no-store"})
        return self._file(self.dist / INDEX, REVALIDATE, scope)

    def _file(self, path: Path, cache_control: str, scope: Scope) -> Response:
        response = self._files.file_response(path, os.stat(path), scope)
        response.headers["Cache-Control"] = cache_control
        return response


class WebAppRoute(BaseRoute):
    """The web app's one route: matches GET and HEAD of every non-API path (see the module)."""

    def __init__(self, web_app: WebApp) -> None:
        self.web_app = web_app

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD") and not is_api_path(scope["path"]):
            return Match.FULL, {}
        return Match.NONE, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.web_app.answer(scope)(scope, receive, send)


def mount(app: FastAPI, dist: Path) -> WebApp:
    """Adds the web app's route after every route `app` has now (so after the API's)."""
    web_app = WebApp(dist)
    app.router.routes.append(WebAppRoute(web_app))
    return web_app


def where(web_app: WebApp, url: str) -> str:
    """One line for the gateway's output: where the app is, or that it is not built."""
    if web_app.built:
        return f"web app at {url}/ (from {web_app.dist})"
    return (f"web app not built (no {web_app.dist / INDEX}): {url}/ says so; install Node.js 20+, "
            "then make run builds it")
