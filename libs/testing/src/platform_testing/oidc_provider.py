"""A real OpenID provider for tests: `oidc-provider-mock` (discovery document, JWKS, the
authorization code flow with PKCE, ID tokens signed with its own key) as a process on a free
port (the `oidc` extra). `sign_in` walks the code flow without a browser, as a user would
through the provider's form, and returns the provider's tokens."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, urlencode, urlsplit

from platform_testing.ports import free_port
from platform_testing.processes import stop_process


class OidcProviderError(RuntimeError):
    pass


class OidcProvider:
    """oidc-provider-mock on 127.0.0.1:`port`; its issuer is `url`.

    Args:
        token_max_age: seconds its ID and access tokens last.
    """

    def __init__(self, token_max_age: int = 3600, log_path: str | Path | None = None) -> None:
        self.port = free_port()
        self.token_max_age = token_max_age
        self.log_path = Path(log_path or Path(tempfile.mkdtemp(prefix="oidc-provider-")) / "provider.log")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        """The provider's command line (a subclass may run the package another way)."""
        return [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(self.port),
                "--token-max-age", str(self.token_max_age)]

    def start(self, timeout: float = 30.0) -> Self:
        """Start the provider; returns once its discovery document answers.

        Raises:
            OidcProviderError: it exited, or did not answer within `timeout` seconds (the log's
                end is in the message).
        """
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise OidcProviderError(f"the OpenID provider exited with {self.process.returncode}:\n"
                                        f"{self.log_path.read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/.well-known/openid-configuration", timeout=1) as answer:
                    if answer.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                time.sleep(0.1)
        self.stop()
        raise OidcProviderError(f"the OpenID provider did not answer within {timeout:g} s; log {self.log_path}")

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
            self.process = None

    def set_claims(self, subject: str, claims: dict[str, Any]) -> None:
        """Give user `subject` these claims (e.g. {"groups": ["platform-admins"]}) in later tokens."""
        request = urllib.request.Request(f"{self.url}/users/{subject}", data=json.dumps(claims).encode(),
                                         method="PUT", headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=10).close()

    def sign_in(self, subject: str, client_id: str, redirect_uri: str = "http://127.0.0.1/callback") -> dict[str, Any]:
        """The code flow with PKCE for user `subject`: the provider's token answer (`id_token`,
        `access_token`, ...)."""
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = urlencode({"client_id": client_id, "redirect_uri": redirect_uri, "response_type": "code",
                           "scope": "openid email profile", "state": "s", "nonce": secrets.token_hex(8),
                           "code_challenge": challenge, "code_challenge_method": "S256"})
        form = urllib.request.Request(f"{self.url}/oauth2/authorize?{query}", data=urlencode({"sub": subject}).encode(),
                                      method="POST")
        location = _redirect_of(form)
        code = parse_qs(urlsplit(location).query)["code"][0]
        token = urllib.request.Request(f"{self.url}/oauth2/token", method="POST", data=urlencode({
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
            "client_id": client_id, "client_secret": "any", "code_verifier": verifier}).encode())
        with urllib.request.urlopen(token, timeout=10) as answer:
            result: dict[str, Any] = json.loads(answer.read())
        return result


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _redirect_of(request: urllib.request.Request) -> str:
    opener = urllib.request.build_opener(_NoRedirects)
    try:
        opener.open(request, timeout=10)
    except urllib.error.HTTPError as exc:
        if exc.code in (302, 303) and exc.headers.get("Location"):
            return str(exc.headers["Location"])
        raise OidcProviderError(f"the provider answered {exc.code}: {exc.read()[:500]!r}") from None
    raise OidcProviderError("the provider did not redirect back with a code")
