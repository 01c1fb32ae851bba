"""Signing in to a PLATFORM_AUTH=oidc platform in Chromium through a real OpenID provider process:
the authorization code flow with PKCE, end to end.

The provider is oidc-provider-mock, started by tests/web/oidc_browser_provider.py with what a
provider offers a browser app and the package lacks as it ships (CORS for the platform's origin,
public clients, PKCE checked with S256; that module says why). The web app fetches the
discovery document, sends the browser to the provider's own authorization page, where the test
signs in as a user, exchanges the code at the token endpoint with the PKCE verifier, and keeps
the ID token, which the gateway checks against the provider's JWKS (iss, aud = the client id).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from platform_testing.oidc_provider import OidcProvider
from platform_testing.platform import PlatformStack
from playwright.sync_api import Page, expect

PROVIDER_SCRIPT = Path(__file__).resolve().parent / "oidc_browser_provider.py"
CLIENT_ID = "simulusion-web"
ADMIN = "oidc-web-admin-token-0123456789abcdef"
USER = "alice@example.com"
TOKEN_MAX_AGE = 20  # s: short enough for the expiry test (the gateway allows 30 s of skew)
CDN = "https://cdn.jsdelivr.net/**"  # the provider's pages link a stylesheet there; nothing is fetched


class BrowserOidcProvider(OidcProvider):
    """platform_testing's OidcProvider, run through oidc_browser_provider.py (CORS for
    `allow_origins`, public clients, PKCE required)."""

    def __init__(self, allow_origins: list[str], token_max_age: int, log_path: Path) -> None:
        super().__init__(token_max_age=token_max_age, log_path=log_path)
        self.allow_origins = allow_origins

    def command(self) -> list[str]:
        origins = [arg for origin in self.allow_origins for arg in ("--allow-origin", origin)]
        return [sys.executable, str(PROVIDER_SCRIPT), "--port", str(self.port),
                "--token-max-age", str(self.token_max_age), *origins]


class OidcPlatform:
    def __init__(self, stack: PlatformStack, provider: BrowserOidcProvider) -> None:
        self.stack = stack
        self.provider = provider

    @property
    def url(self) -> str:
        return self.stack.url


@pytest.fixture(scope="module")
def oidc_platform(web_dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OidcPlatform]:
    root = tmp_path_factory.mktemp("oidc-platform")
    provider_log = root / "provider.log"
    # The gateway's port is chosen when the stack is made, so the provider can allow its origin.
    provider = BrowserOidcProvider([], TOKEN_MAX_AGE, provider_log)
    stack = PlatformStack(root, extra_env={
        "PLATFORM_WEB_DIST": str(web_dist), "PLATFORM_AUTH": "oidc", "PLATFORM_OIDC_ISSUER": provider.url,
        "PLATFORM_OIDC_CLIENT_ID": CLIENT_ID, "PLATFORM_OIDC_ROLE_MAP": "platform-admins=admin",
        "PLATFORM_ADMIN_TOKEN": ADMIN})
    provider.allow_origins = [stack.url]
    provider.start()
    try:
        provider.set_claims(USER, {"email": USER, "groups": ["platform-admins"]})
        stack.start()
        try:
            yield OidcPlatform(stack, provider)
        finally:
            left = stack.stop()
            assert not left, f"platform processes left running after stop: {left}"
    finally:
        provider.stop()


def open_oidc_page(open_page, platform: OidcPlatform) -> Page:
    page: Page = open_page(platform.url)
    page.context.route(CDN, lambda route: route.fulfill(status=200, content_type="text/css", body=""))
    return page


def sign_in_at_provider(page: Page, platform: OidcPlatform, subject: str) -> dict[str, list[str]]:
    """From the sign-in page: the provider's button, then the provider's own form as `subject`.
    Returns the authorization request's query as the provider received it."""
    page.get_by_test_id("sign-in-oidc").click()
    page.wait_for_url(re.compile(re.escape(f"{platform.provider.url}/oauth2/authorize") + r"\?"))
    query = parse_qs(urlsplit(page.url).query)
    page.locator("input[name=sub]").fill(subject)
    page.get_by_role("button", name="Authorize").click()
    return query


def kept_token(page: Page) -> str | None:
    token: str | None = page.evaluate("() => localStorage.getItem('simulusion.token')")
    return token


def jwt_claims(token: str) -> dict[str, object]:
    payload = token.split(".")[1]
    claims: dict[str, object] = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return claims


def test_sign_in_with_the_identity_provider_code_flow_and_pkce(open_page, oidc_platform: OidcPlatform, console,
                                                                screenshot) -> None:
    console.allow(r"status of 404")  # the provider's pages have no favicon
    page = open_oidc_page(open_page, oidc_platform)
    page.goto("/recordings?env_id=cartpole")
    expect(page).to_have_url(f"{oidc_platform.url}/sign-in?next=%2Frecordings%3Fenv_id%3Dcartpole")
    expect(page.get_by_test_id("sign-in-page")).to_be_visible()
    expect(page.get_by_test_id("sign-in-token")).to_be_visible()  # pasting an API token stays available
    screenshot(page, "sign-in-oidc")

    query = sign_in_at_provider(page, oidc_platform, USER)
    assert query["response_type"] == ["code"] and query["client_id"] == [CLIENT_ID]
    assert query["redirect_uri"] == [f"{oidc_platform.url}/sign-in/callback"]
    assert query["scope"] == ["openid email profile"]  # "groups" is not among this provider's scopes_supported
    assert query["code_challenge_method"] == ["S256"] and re.fullmatch(r"[A-Za-z0-9_-]{43}", query["code_challenge"][0])
    assert query["state"][0] and query["nonce"][0]

    # Back at the page the visitor was going to, signed in as the provider's user, an admin by its group.
    page.wait_for_url(f"{oidc_platform.url}/recordings?env_id=cartpole")
    expect(page.get_by_test_id("signed-in-as")).to_have_text(f"oidc:{USER} (admin, default)")
    token = kept_token(page)
    assert token is not None
    claims = jwt_claims(token)
    assert claims["iss"] == oidc_platform.provider.url and claims["aud"] in (CLIENT_ID, [CLIENT_ID])
    assert claims["sub"] == USER
    assert claims["nonce"] == query["nonce"][0]
    me = page.evaluate("""async () => {
        const answer = await fetch('/v0/me', {headers: {Authorization: `Bearer ${localStorage.getItem('simulusion.token')}`}});
        return {status: answer.status, body: await answer.json()};
    }""")
    assert me == {"status": 200, "body": {"subject": f"oidc:{USER}", "team": "default", "role": "admin", "token_name": None}}
    assert page.evaluate("() => sessionStorage.getItem('simulusion.oidc.pending')") is None  # used once
    # The exchange was a public client's: no secret, the verifier checked by the provider.
    assert re.search(r'"POST /oauth2/token HTTP/1.1" 200', oidc_platform.provider.log_path.read_text())

    page.reload()  # the sign-in survives a reload
    expect(page.get_by_test_id("signed-in-as")).to_have_text(f"oidc:{USER} (admin, default)")
    page.get_by_test_id("sign-out").click()
    expect(page.get_by_test_id("sign-in-page")).to_be_visible()
    assert kept_token(page) is None


def test_an_expired_identity_token_returns_to_sign_in_with_the_reason(open_page, oidc_platform: OidcPlatform,
                                                                        console, screenshot) -> None:
    console.allow(r"status of (401|404)")  # /v0/me refusing the expired token; the provider's favicon
    page = open_oidc_page(open_page, oidc_platform)
    page.goto("/")
    sign_in_at_provider(page, oidc_platform, "bob@example.com")
    expect(page.get_by_test_id("signed-in-as")).to_have_text("oidc:bob@example.com (member, default)")
    token = kept_token(page)
    assert token is not None
    expires = float(jwt_claims(token)["exp"])  # type: ignore[arg-type]
    # The app looks again once the gateway stops taking the token (exp + its 30 s of skew).
    wait_ms = max(0.0, expires + 30 - time.time()) * 1000 + 15_000
    expect(page.get_by_test_id("sign-in-error")).to_have_text("the identity token expired", timeout=wait_ms)
    expect(page).to_have_url(re.compile(r"/sign-in(\?|$)"))
    assert kept_token(page) is None
    answer = httpx.get(f"{oidc_platform.url}/v0/me", headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert answer.status_code == 401 and answer.json()["detail"] == "the identity token expired"
    screenshot(page, "sign-in-expired")


def test_a_callback_with_a_forged_state_is_refused_before_any_exchange(open_page, oidc_platform: OidcPlatform,
                                                                        console) -> None:
    console.allow(r"status of 404")
    page = open_oidc_page(open_page, oidc_platform)
    page.goto("/")
    page.get_by_test_id("sign-in-oidc").click()
    page.wait_for_url(re.compile(re.escape(f"{oidc_platform.provider.url}/oauth2/authorize")))
    exchanges = oidc_platform.provider.log_path.read_text().count("POST /oauth2/token")
    page.goto(f"{oidc_platform.url}/sign-in/callback?code=stolen-code&state=forged")
    expect(page.get_by_test_id("oidc-callback-error")).to_contain_text('unexpected "state" response parameter value')
    assert oidc_platform.provider.log_path.read_text().count("POST /oauth2/token") == exchanges
    assert kept_token(page) is None
    page.get_by_role("link", name="Back to sign-in").click()
    expect(page.get_by_test_id("sign-in-page")).to_be_visible()


def test_the_provider_checks_pkce_for_a_public_client(oidc_platform: OidcPlatform) -> None:
    """What the browser test relies on: without the right verifier the provider gives no token."""
    provider = oidc_platform.provider
    redirect_uri = f"{oidc_platform.url}/sign-in/callback"

    def code_for(verifier: str) -> str:
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = urlencode({"client_id": CLIENT_ID, "redirect_uri": redirect_uri, "response_type": "code",
                           "scope": "openid", "state": "s", "code_challenge": challenge, "code_challenge_method": "S256"})
        answer = httpx.post(f"{provider.url}/oauth2/authorize?{query}", data={"sub": USER}, timeout=30)
        assert answer.status_code == 302, answer.text
        return parse_qs(urlsplit(answer.headers["Location"]).query)["code"][0]

    def exchange(code: str, verifier: str | None) -> httpx.Response:
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri, "client_id": CLIENT_ID}
        if verifier is not None:
            form["code_verifier"] = verifier
        return httpx.post(f"{provider.url}/oauth2/token", data=form, timeout=30,
                          headers={"Origin": oidc_platform.url})

    verifier = secrets.token_urlsafe(48)
    wrong = exchange(code_for(verifier), secrets.token_urlsafe(48))
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    missing = exchange(code_for(verifier), None)
    assert missing.status_code == 400 and "code_verifier" in missing.json()["error_description"]
    good = exchange(code_for(verifier), verifier)
    assert good.status_code == 200 and good.headers["Access-Control-Allow-Origin"] == oidc_platform.url
    assert httpx.get(f"{oidc_platform.url}/v0/me", headers={"Authorization": f"Bearer {good.json()['id_token']}"},
                     timeout=30).json()["subject"] == f"oidc:{USER}"
    no_challenge = httpx.get(f"{provider.url}/oauth2/authorize", timeout=30, params={
        "client_id": CLIENT_ID, "redirect_uri": redirect_uri, "response_type": "code", "scope": "openid", "state": "s"})
    assert no_challenge.status_code == 302 and "PKCE+is+required" in no_challenge.headers["Location"]
