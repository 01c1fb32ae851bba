"""oidc-provider-mock set up as a real provider sets itself up for a browser app (a single-page
app signing in with the authorization code flow and PKCE), for tests/web/test_oidc_sign_in.py.

oidc-provider-mock 0.3.4 as it ships (`python -m oidc_provider_mock`, platform_testing's
`OidcProvider`) lacks three things such a provider offers, and which the web app needs:

- **CORS.** Its discovery document, JWKS and token endpoint send no `Access-Control-Allow-Origin`,
  so a page on another origin (the platform's) cannot read them: the browser blocks the
  discovery fetch and the code exchange. Providers allow the web origins registered for a
  client (Keycloak's "Web origins", Auth0's "Allowed Web Origins", ...): here the origins given
  with `--allow-origin`, on those three endpoints only (not the authorization page, which the
  browser navigates to).
- **Public clients.** Its token endpoint takes only `client_secret_basic` and
  `client_secret_post` (authlib's default), so a client without a secret (`none`, RFC 7636's
  public client) is refused with invalid_client. Here `none` is accepted too.
- **PKCE checked.** It registers no PKCE extension: `code_challenge` is ignored and any
  `code_verifier` passes. Here authlib's own `CodeChallenge` checks it, S256 only, and an
  authorization request without a challenge is refused, as Keycloak does with PKCE required.

Everything else (the authorization form, the users and their claims, ID tokens signed with its
own key, the discovery document, JWKS) is the package's own code, unchanged: the gateway checks
the ID tokens against this provider's keys exactly as against any other.

    python tests/web/oidc_browser_provider.py --port 9400 --allow-origin http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import warnings
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any, ClassVar

import authlib.deprecate
import oidc_provider_mock._app as provider_app
import uvicorn
from authlib.oauth2.rfc6749.errors import InvalidRequestError
from authlib.oauth2.rfc7636 import CodeChallenge
from oidc_provider_mock._storage import AuthorizationCode, storage

CORS_PATHS = ("/.well-known/openid-configuration", "/jwks", "/oauth2/token", "/userinfo")


@dataclasses.dataclass(kw_only=True, frozen=True)
class PkceCode(AuthorizationCode):
    """An authorization code with the PKCE challenge it was issued for."""

    code_challenge: str | None = None
    code_challenge_method: str | None = None


class PublicClientPkceGrant(provider_app.AuthorizationCodeGrant):
    """The package's grant, taking public clients and requiring PKCE with S256."""

    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic", "client_secret_post", "none"]

    def __init__(self, request: Any, server: Any) -> None:
        super().__init__(request, server)
        self.register_hook("after_validate_authorization_request_payload", _require_s256)
        CodeChallenge(required=True)(self)

    def save_authorization_code(self, code: str, request: object) -> None:
        super().save_authorization_code(code, request)
        stored = storage.get_authorization_code(code)
        assert stored is not None
        data = request.payload.data  # type: ignore[attr-defined]
        fields = {f.name: getattr(stored, f.name) for f in dataclasses.fields(AuthorizationCode)}
        storage.store_authorization_code(PkceCode(**fields, code_challenge=data.get("code_challenge"),
                                                  code_challenge_method=data.get("code_challenge_method")))


def _require_s256(grant: Any, redirect_uri: str) -> None:
    data = grant.request.payload.data
    if not data.get("code_challenge"):
        raise InvalidRequestError("PKCE is required: send code_challenge (S256)")
    if data.get("code_challenge_method") != "S256":
        raise InvalidRequestError("code_challenge_method must be S256")


class Cors:
    """WSGI middleware: CORS answers for `origins` on CORS_PATHS (preflights included)."""

    def __init__(self, app: Callable[..., Iterable[bytes]], origins: set[str]) -> None:
        self.app = app
        self.origins = origins

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        origin = environ.get("HTTP_ORIGIN", "")
        allowed = origin in self.origins and environ.get("PATH_INFO", "") in CORS_PATHS
        if not allowed:
            return self.app(environ, start_response)
        headers = [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
        if environ.get("REQUEST_METHOD") == "OPTIONS" and environ.get("HTTP_ACCESS_CONTROL_REQUEST_METHOD"):
            asked = environ.get("HTTP_ACCESS_CONTROL_REQUEST_HEADERS", "")
            start_response("204 No Content", [*headers, ("Access-Control-Allow-Methods", "GET, POST"),
                                              ("Access-Control-Allow-Headers", asked or "Content-Type"),
                                              ("Access-Control-Max-Age", "600"), ("Content-Length", "0")])
            return [b""]

        def with_cors(status: str, response_headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            kept = [(k, v) for k, v in response_headers if k.lower() not in ("access-control-allow-origin", "vary")]
            return start_response(status, kept + headers, exc_info)

        return self.app(environ, with_cors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token-max-age", type=int, default=3600, help="seconds ID and access tokens last")
    parser.add_argument("--allow-origin", action="append", default=[], help="a web origin allowed by CORS (repeatable)")
    args = parser.parse_args()

    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # plain http on 127.0.0.1, as the package's CLI does
    warnings.simplefilter("ignore", authlib.deprecate.AuthlibDeprecationWarning)
    # The package registers its grant class when the app is made: make it register ours.
    provider_app.AuthorizationCodeGrant = PublicClientPkceGrant  # type: ignore[misc]
    app = provider_app.app(access_token_max_age=timedelta(seconds=args.token_max_age))
    app.wsgi_app = Cors(app.wsgi_app, set(args.allow_origin))  # type: ignore[method-assign]
    uvicorn.run(app, interface="wsgi", host=args.host, port=args.port, log_level="info")


if __name__ == "__main__":
    main()
