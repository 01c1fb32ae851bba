"""The Team page on a managed platform (PLATFORM_MODE=managed, PLATFORM_AUTH=token) in Chromium:
the operator makes an API token and sees its secret once (Copy puts it on the clipboard), the
token works, then is revoked after a confirmation and no longer works; the operator makes a
team, sets its quotas and adds and removes a member; a member of that team sees it read-only; a
team's admin gets its team's controls but no quotas nor other teams, and bars members from
making tokens."""

from __future__ import annotations


import httpx
from platform_testing.platform import PlatformStack
from playwright.sync_api import expect

def me(platform: PlatformStack, token: str) -> httpx.Response:
    return httpx.get(f"{platform.url}/v0/me", headers={"Authorization": f"Bearer {token}"}, timeout=30)


def test_an_api_token_is_shown_once_then_revoked_and_refused(signed_in_page, managed_platform: PlatformStack,
                                                              console, screenshot) -> None:
    console.allow(r"status of 401")  # Chromium logs the refused calls
    page = signed_in_page("/team")
    expect(page).to_have_url(f"{managed_platform.url}/team")  # back where the visitor was going
    expect(page.get_by_test_id("team-name")).to_have_text("default")

    page.get_by_test_id("token-name").fill("browser-made")
    page.get_by_test_id("token-role").select_option("member")
    page.get_by_test_id("token-expiry").select_option("30")
    page.get_by_test_id("token-create").click()
    box = page.get_by_test_id("token-secret-box")
    expect(box).to_be_visible()
    expect(page.get_by_test_id("token-secret-warning")).to_have_text("it will not be shown again.")
    secret = page.get_by_test_id("token-secret").input_value()
    assert secret.startswith("sim_")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=managed_platform.url)
    page.get_by_test_id("token-copy").click()
    expect(page.get_by_test_id("token-copied")).to_have_text("Copied to the clipboard.")
    assert page.evaluate("() => navigator.clipboard.readText()") == secret
    screenshot(page, "team-token-secret")

    answer = me(managed_platform, secret)
    assert answer.status_code == 200, answer.text
    token_id = answer.json()["subject"]
    row = page.get_by_test_id(f"token-row-{token_id}")
    expect(row).to_contain_text("browser-made")
    expect(page.get_by_test_id(f"token-state-{token_id}")).to_have_text("active")

    page.get_by_test_id("token-secret-done").click()
    expect(box).to_have_count(0)
    assert secret not in page.content()
    page.reload()  # the list, read again, has no secret either
    expect(row).to_be_visible()
    assert secret not in page.content()
    expect(page.get_by_test_id(f"token-last-used-{token_id}")).not_to_have_text("never")

    page.get_by_test_id(f"token-revoke-{token_id}").click()
    dialog = page.get_by_test_id("revoke-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(token_id)
    page.get_by_test_id("revoke-dialog-cancel").click()  # cancelling leaves it working
    expect(dialog).to_be_hidden()
    assert me(managed_platform, secret).status_code == 200
    page.get_by_test_id(f"token-revoke-{token_id}").click()
    page.get_by_test_id("revoke-dialog-confirm").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_test_id(f"token-state-{token_id}")).to_contain_text("revoked")
    expect(page.get_by_test_id(f"token-revoke-{token_id}")).to_have_count(0)
    refused = me(managed_platform, secret)
    assert refused.status_code == 401 and "revoked" in refused.json()["detail"]


def test_admins_set_quotas_and_members_which_a_member_sees_read_only(signed_in_page, managed_platform: PlatformStack,
                                                                    admin_token: str, console, screenshot) -> None:
    page = signed_in_page("/team")
    page.get_by_test_id("team-new-name").fill("ml-research")
    page.get_by_test_id("team-create").click()
    expect(page).to_have_url(f"{managed_platform.url}/team?team=ml-research")
    expect(page.get_by_test_id("team-name")).to_have_text("ml-research")
    expect(page.get_by_test_id("team-picker")).to_have_value("ml-research")

    expect(page.get_by_test_id("quota-sessions")).to_have_text("0 of no limit")
    page.get_by_test_id("quota-edit").click()
    page.get_by_test_id("quota-max-sessions").fill("2.5")
    page.get_by_test_id("quota-save").click()
    expect(page.get_by_test_id("quota-save-error")).to_have_text("Max sessions: a whole number, or empty for no limit")
    page.get_by_test_id("quota-max-sessions").fill("2")
    page.get_by_test_id("quota-instance-hours").fill("10")
    page.get_by_test_id("quota-save").click()
    expect(page.get_by_test_id("quota-sessions")).to_have_text("0 of 2")
    expect(page.get_by_test_id("quota-hours")).to_have_text("0 of 10 per month")
    team = httpx.get(f"{managed_platform.url}/v0/teams/ml-research", headers={"Authorization": f"Bearer {admin_token}"},
                     timeout=30).json()
    assert (team["max_sessions"], team["instance_hours_per_month"]) == (2, 10)

    for subject, role in (("bob@example.com", "member"), ("carol@example.com", "admin")):
        page.get_by_test_id("member-subject").fill(subject)
        page.get_by_test_id("member-role").select_option(role)
        page.get_by_test_id("member-add").click()
        expect(page.get_by_test_id(f"member-role-{subject}")).to_have_text(role)
    screenshot(page, "team", full_page=True)
    page.get_by_test_id("member-remove-carol@example.com").click()
    page.get_by_test_id("remove-member-dialog-confirm").click()
    expect(page.get_by_test_id("member-row-carol@example.com")).to_have_count(0)
    expect(page.get_by_test_id("member-row-bob@example.com")).to_be_visible()

    # A member of ml-research: their team only, no admin controls.
    made = httpx.post(f"{managed_platform.url}/v0/tokens", json={"name": "ml member", "team": "ml-research"},
                      headers={"Authorization": f"Bearer {admin_token}"}, timeout=30)
    assert made.status_code == 201, made.text
    member = signed_in_page("/team?team=default", made.json()["token"])
    expect(member.get_by_test_id("team-name")).to_have_text("ml-research")
    expect(member.get_by_test_id("team-signed-in-as")).to_have_text(f"ml member ({made.json()['id']})")
    expect(member.get_by_test_id("signed-in-as")).to_contain_text(f"ml member ({made.json()['id']})")
    expect(member.get_by_test_id("quota-hours")).to_have_text("0 of 10 per month")
    expect(member.get_by_test_id("member-row-bob@example.com")).to_be_visible()
    for admin_only in ("team-picker", "team-new-name", "quota-edit", "member-add", "member-remove-bob@example.com",
                       "team-members-mint-tokens"):
        expect(member.get_by_test_id(admin_only)).to_have_count(0)
    expect(member.get_by_test_id("team-members-mint-tokens-text")).to_have_text("Members may make API tokens.")
    expect(member.locator("[data-testid=token-role] option[value=admin]")).to_have_count(0)
    expect(member.get_by_test_id(f"token-row-{made.json()['id']}")).to_be_visible()
    screenshot(member, "team-member", full_page=True)


def test_a_team_admin_gets_its_teams_controls_only_and_bars_members_from_minting(
        signed_in_page, managed_platform: PlatformStack, admin_token: str, console, screenshot) -> None:
    console.allow(r"status of 403")  # the member's refused token
    url, operator = managed_platform.url, {"Authorization": f"Bearer {admin_token}"}
    assert httpx.post(f"{url}/v0/teams", json={"name": "vision"}, headers=operator, timeout=30).status_code == 201
    made = [httpx.post(f"{url}/v0/tokens", json={"name": f"vision {role}", "team": "vision", "role": role},
                       headers=operator, timeout=30).json() for role in ("admin", "member")]
    admin, member = made

    page = signed_in_page("/team?team=default", admin["token"])
    expect(page.get_by_test_id("team-name")).to_have_text("vision")
    expect(page.get_by_test_id("team-role")).to_contain_text("admin of team vision")
    for operator_only in ("team-picker", "team-new-name", "quota-edit"):
        expect(page.get_by_test_id(operator_only)).to_have_count(0)
    expect(page.get_by_test_id("member-add")).to_be_visible()
    expect(page.locator("[data-testid=token-role] option[value=admin]")).to_have_count(1)
    expect(page.locator("[data-testid=token-role] option[value=operator]")).to_have_count(0)
    expect(page.get_by_test_id(f"token-row-{member['id']}")).to_be_visible()  # the team's tokens
    setting = page.get_by_test_id("team-members-mint-tokens")
    expect(setting).to_be_checked()
    setting.click()
    expect(setting).not_to_be_checked()
    assert httpx.get(f"{url}/v0/teams/vision", headers=operator, timeout=30).json()["members_mint_tokens"] is False
    screenshot(page, "team-admin", full_page=True)

    refused = httpx.post(f"{url}/v0/tokens", json={"name": "x"}, headers={"Authorization": f"Bearer {member['token']}"},
                         timeout=30)
    assert refused.status_code == 403 and "turned off API tokens made by members" in refused.json()["detail"]
    as_member = signed_in_page("/team", member["token"])
    expect(as_member.get_by_test_id("team-members-mint-tokens-text")).to_have_text(
        "The team's admin turned off API tokens made by members.")
    expect(as_member.get_by_test_id(f"token-row-{member['id']}")).to_be_visible()
    expect(as_member.get_by_test_id(f"token-row-{admin['id']}")).to_have_count(0)  # their own tokens only
    as_member.get_by_test_id("token-name").fill("mine")
    as_member.get_by_test_id("token-create").click()
    expect(as_member.get_by_test_id("token-create-error")).to_contain_text("turned off API tokens made by members")
