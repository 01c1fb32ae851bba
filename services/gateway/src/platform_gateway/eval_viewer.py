"""Inspect's own log viewer, for the transcripts of evals (docs/evals.md, "Transcripts").

The viewer is the static build that ships in `inspect_ai` (`inspect_ai/_view/dist`), served as
files: the gateway never imports `inspect_ai` (its install is heavy: Textual, boto3, tiktoken...)
and only needs the folder, found without importing the package (`importlib.util.find_spec`) or
named by `PLATFORM_EVALS_VIEWER_DIST`. The viewer runs in its static mode (`?log_file=`): it
reads a `.eval` log by HTTP byte ranges (HEAD, then `Range: bytes=a-b`) from the eval's own log
route, `/v0/evals/{id}/logs/{name}`, which passes the token and the team guard like every /v0
route. So there is no second path to the logs, a large log is read a member at a time, and
another team's eval is a 404 to the viewer as to anyone.

- `GET /v0/evals/{id}/viewer`: the viewer's page (its `index.html` with its assets' paths made
  absolute and `platform-auth.js` before its code); the same page for every eval and caller, so
  it needs no token (a browser's navigation cannot send one). The eval's log is named in its
  query, `?log_file=logs/<name>` (relative: the page's folder is the eval's), and the sample in
  its hash route, `#/logs/logs/<name>/samples/sample/<sample>/<epoch>/` (`transcript_url`).
- `GET /v0/eval-viewer/assets/...`: its files (content-hashed names: cached for a day).
- `GET /v0/eval-viewer/platform-auth.js`: adds the signed-in token (the web app's, in this
  origin's localStorage) to the viewer's requests to `/v0/evals/`, as the web app does.

Every answer carries the viewer's own Content-Security-Policy (`content-security-policy.json` of
the build: its scripts and same-origin requests only), as transcripts hold models' text.
"""

from __future__ import annotations

import importlib.util
import json
import mimetypes
from pathlib import Path
from urllib.parse import quote

from fastapi import APIRouter, FastAPI, Path as PathParam
from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, Response

ASSETS_URL = "/v0/eval-viewer/assets/"
AUTH_SCRIPT_URL = "/v0/eval-viewer/platform-auth.js"
TOKEN_KEY = "simulusion.token"  # web/src/lib/auth/token.ts
ASSET_CACHE = "public, max-age=86400"

AUTH_SCRIPT = """// Sends the signed-in token (the web app keeps it in this origin's localStorage) with the log
// viewer's requests to /v0/evals/, which need it as every API call does (docs/evals.md).
(() => {
  let token = "";
  try { token = (window.localStorage.getItem(%s) || "").trim(); } catch { token = ""; }
  if (!token) return;
  const original = window.fetch.bind(window);
  window.fetch = (input, init) => {
    const request = input instanceof Request ? input : null;
    const url = new URL(request ? request.url : String(input), window.location.href);
    if (url.origin !== window.location.origin || !url.pathname.startsWith("/v0/evals/")) {
      return original(input, init);
    }
    const headers = new Headers((init && init.headers) || (request ? request.headers : undefined));
    if (!headers.has("Authorization")) headers.set("Authorization", "Bearer " + token);
    return original(input, { ...(init || {}), headers });
  };
})();
""" % json.dumps(TOKEN_KEY)

NOT_INSTALLED = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>The log viewer is not installed</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 42rem; margin: 3rem auto; line-height: 1.5">
<h1>The log viewer is not installed</h1>
<p>Transcripts are shown with Inspect's own log viewer, which ships in the Python package
<code>inspect-ai</code>. Install <code>inspect-ai==0.3.285</code> beside the gateway, or set
<code>PLATFORM_EVALS_VIEWER_DIST</code> to a copy of its <code>inspect_ai/_view/dist</code>
folder, and reload this page. The eval's logs are served meanwhile at
<code>/v0/evals/{id}/logs/{name}</code>.</p>
</body></html>
"""


def installed_dist() -> Path | None:
    """`inspect_ai/_view/dist` of the installed inspect_ai (found without importing it), or None."""
    spec = importlib.util.find_spec("inspect_ai")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "_view" / "dist"


def viewer_url(eval_id: str, log: str, sample_id: str | None = None, epoch: int | None = None) -> str:
    """The viewer's page for `log` of the eval; at the sample's transcript when one is named."""
    file = quote("logs/" + log, safe="/")
    url = f"/v0/evals/{eval_id}/viewer?log_file={file}"
    if sample_id is None or epoch is None:
        return url
    return f"{url}#/logs/{file}/samples/sample/{quote(sample_id, safe='')}/{epoch}/"


class EvalViewer:
    """The viewer's files in `dist` (None: not installed; its pages say how to install it)."""

    def __init__(self, dist: Path | None) -> None:
        self.dist = dist.absolute() if dist is not None else None

    @property
    def installed(self) -> bool:
        return self.dist is not None and (self.dist / "index.html").is_file()

    def policy(self) -> str:
        """The build's Content-Security-Policy, as a header's value."""
        assert self.dist is not None
        found = self.dist / "content-security-policy.json"
        directives = json.loads(found.read_text())["directives"] if found.is_file() else {"default-src": ["'self'"]}
        return "; ".join(f"{name} {' '.join(values)}" for name, values in directives.items())

    def headers(self, cache: str) -> dict[str, str]:
        return {"Content-Security-Policy": self.policy(), "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer", "Cache-Control": cache}

    def page(self) -> Response:
        if not self.installed:
            return HTMLResponse(NOT_INSTALLED, status_code=503, headers={"Cache-Control": "no-store"})
        assert self.dist is not None
        html = (self.dist / "index.html").read_text().replace('"./assets/', f'"{ASSETS_URL}')
        html = html.replace("<head>", f'<head>\n    <script src="{AUTH_SCRIPT_URL}"></script>', 1)
        return HTMLResponse(html, headers=self.headers("no-cache"))

    def asset(self, relative: str) -> Response:
        if not self.installed:
            return PlainTextResponse("the log viewer is not installed (docs/evals.md)", status_code=503)
        assert self.dist is not None
        root = (self.dist / "assets").resolve()
        found = (root / relative).resolve()
        if relative.startswith(".") or not found.is_relative_to(root) or not found.is_file():
            return PlainTextResponse(f"{relative} is not a file of the log viewer", status_code=404)
        media = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
        return FileResponse(found, media_type=media, headers=self.headers(ASSET_CACHE))

    def auth_script(self) -> Response:
        return Response(AUTH_SCRIPT, media_type="text/javascript", headers={"Cache-Control": "no-cache"})


def mount(app: FastAPI, dist: Path | None) -> EvalViewer:
    """Adds the viewer's page and files to `app` (outside the /v0 router: no token, see the module)."""
    viewer = EvalViewer(dist if dist is not None else installed_dist())
    router = APIRouter(include_in_schema=False)

    @router.api_route("/v0/evals/{eval_id}/viewer", methods=["GET", "HEAD"])
    async def viewer_page(eval_id: str = PathParam(min_length=1, max_length=64)) -> Response:
        return viewer.page()

    @router.api_route("/v0/eval-viewer/assets/{relative:path}", methods=["GET", "HEAD"])
    async def viewer_asset(relative: str) -> Response:
        return viewer.asset(relative)

    @router.api_route(AUTH_SCRIPT_URL, methods=["GET", "HEAD"])
    async def viewer_auth() -> Response:
        return viewer.auth_script()

    app.include_router(router)
    return viewer
