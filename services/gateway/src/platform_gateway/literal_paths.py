"""405s for the collection's own names: a request to a literal path of the API (one without a
`{parameter}`, e.g. `/v0/machines/ssh-key`) with a method the OpenAPI document does not give it
is answered 405 with that path's own methods in `Allow`.

Without this, FastAPI's router lets a templated sibling (`/v0/machines/{machine_id}`) take the
request, as if "ssh-key" were a machine's id, and its `Allow` lists the sibling's methods: the
answer would promise methods the document does not have for the path asked.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


class LiteralPathMethods:
    """The ASGI middleware (see the module's docstring); `document` makes the OpenAPI document."""

    def __init__(self, app: ASGIApp, document: Any) -> None:
        self.app = app
        self._document = document
        self._allowed: dict[str, frozenset[str]] | None = None

    def allowed(self) -> dict[str, frozenset[str]]:
        """The methods of each literal path that shares its parent with a templated one."""
        if self._allowed is None:
            paths: dict[str, Any] = self._document().get("paths", {})
            templated_parents = {path.rsplit("/", 1)[0] for path in paths if path.rsplit("/", 1)[-1].startswith("{")}
            self._allowed = {
                path: frozenset(method.upper() for method in item if method in _METHODS)
                for path, item in paths.items()
                if "{" not in path and path.rsplit("/", 1)[0] in templated_parents
            }
        return self._allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            methods = self.allowed().get(scope["path"])
            if methods is not None and scope["method"] not in methods:
                allow = ", ".join(sorted(methods))
                response = JSONResponse({"detail": f"{scope['method']} is not allowed on {scope['path']}: use {allow}",
                                         "code": "method_not_allowed"}, 405, headers={"Allow": allow})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
