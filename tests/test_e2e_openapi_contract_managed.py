"""The OpenAPI contract with auth on: a managed platform (PLATFORM_MODE=managed,
PLATFORM_AUTH=token), every operation called by schemathesis as a team's member with a bearer
token: no answer is a 5xx, and every answer is one the document lists, with the content type and
body it declares (401 and 403 among them). The document itself says a bearer token is needed.

Fewer fuzzed cases an operation than the open platform's run (test_e2e_openapi_contract.py),
which already covers the operations' bodies; this one is about what auth and teams add: the
identity, the team guard on every path and the teams, members, tokens and usage routes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
import schemathesis
from platform_gateway.app import api_app
from platform_testing.platform import PlatformStack, running_platform

from contract_ids import ContractIds, contract_config

ADMIN = "contract-admin-token-0123456789"
MAX_EXAMPLES = 6

CONFIG = contract_config(MAX_EXAMPLES)  # as test_e2e_openapi_contract.py's

DOCUMENT = api_app(auth_required=True, managed=True).openapi()
schema = schemathesis.openapi.from_dict(DOCUMENT, config=CONFIG)


@schema.auth()
class MemberToken:
    """The member's bearer token, as schemathesis' own auth: its checks then know which requests
    carry a good token and which (missing or wrong ones, generated) must get a 401."""

    token = ""

    def get(self, case, context):
        return MemberToken.token

    def set(self, case, data, context) -> None:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}


@dataclass
class Member:
    """A member of team `acme`, its token, and the things it made (ids put in place of generated ones)."""

    url: str
    token: str
    ids: ContractIds

@pytest.fixture(scope="module")
def managed_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    env = {"PLATFORM_MODE": "managed", "PLATFORM_AUTH": "token", "PLATFORM_ADMIN_TOKEN": ADMIN}
    with running_platform(tmp_path_factory.mktemp("managed-contract"), extra_env=env) as stack:
        yield stack


@pytest.fixture(scope="module")
def member(managed_stack: PlatformStack) -> Iterator[Member]:
    admin = {"Authorization": f"Bearer {ADMIN}"}
    url = managed_stack.url
    assert httpx.post(f"{url}/v0/teams", json={"name": "acme"}, headers=admin, timeout=30).status_code == 201
    made = httpx.post(f"{url}/v0/tokens", json={"name": "contract", "team": "acme"}, headers=admin, timeout=30)
    assert made.status_code == 201, made.text
    token = made.json()["token"]
    MemberToken.token = token
    http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
    ids = ContractIds(http, {"env_id": "cartpole", "name": "acme"})
    session = ids.live_session()
    assert http.post(f"/v0/sessions/{session}/reset", json={"seed": 0}).status_code == 200
    saved = http.post(f"/v0/sessions/{session}/saved-snapshots", json={"label": "contract"})
    assert saved.status_code == 201, saved.text
    ids.fixed.update(recording_id=session, snapshot_id=saved.json()["id"])
    yield Member(url, token, ids)
    ids.close_all()
    http.close()


def test_the_managed_platform_serves_this_document(managed_stack: PlatformStack) -> None:
    served = httpx.get(f"{managed_stack.url}/openapi.json").json()
    assert served == DOCUMENT
    assert served["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    assert "401" in served["paths"]["/v0/sessions"]["post"]["responses"]


@schema.parametrize()
def test_every_answer_with_a_token_is_one_the_document_promises(case, member: Member) -> None:
    member.ids.call(case, member.url)
