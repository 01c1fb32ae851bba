"""`/metrics` on a running platform (real processes): the token guards it, the body passes
`promtool check metrics`, it holds every metric of `platform_contracts.metric_names` and nothing
else, from every service, with bounded labels; the metrics move when a session is created,
stepped and closed (a web page's requests apart from the SDK's); and a real Prometheus (Debian's package) scrapes it with the token (`up`
1, the series there through its query API) and not with a wrong one (`up` 0)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import platform_sdk
import pytest
from platform_contracts import metric_names
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.ports import free_port
from platform_testing.processes import stop_process
from platform_testing.waiting import wait_for
from prometheus_client.parser import text_string_to_metric_families
from simulusion.env.v1 import environment_pb2 as env_pb
from websockets.sync.client import connect as ws_connect

TOKEN = "metrics-token-0123456789abcdef"
SERVICES = ("gateway", "broker", "envhost", "recorder", "machines", "evals")
SESSION_ID_LIKE = re.compile(r"^[0-9a-f]{16,}$")


def _tool(name: str) -> str:
    path = shutil.which(name)
    assert path is not None, (f"{name} is missing: install Debian's prometheus package "
                              "(scripts/install_system_deps.sh does, as root)")
    return path


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    root = tmp_path_factory.mktemp("metrics")
    with running_platform(root / "platform", extra_env={"PLATFORM_METRICS_TOKEN": TOKEN}) as platform:
        yield platform


def _scrape(stack: PlatformStack, token: str | None = TOKEN) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return httpx.get(f"{stack.url}/metrics", headers=headers, timeout=30)


def _samples(body: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(body) for s in family.samples}


def _sum(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    return sum(value for (sample, found), value in samples.items()
               if sample == name and set(labels.items()) <= set(found))


def _every_service_answers(stack: PlatformStack) -> str:
    """A scrape once every service has started answering (they start one after another)."""
    def answered() -> str | None:
        body = _scrape(stack).text
        samples = _samples(body)
        return body if all(_sum(samples, "simulusion_metrics_replies", from_service=s) >= 1 for s in SERVICES) else None

    return wait_for(answered, timeout=60, what="an answer from every service")


def test_metrics_needs_the_token_and_answers_401_in_json_without_it(stack: PlatformStack) -> None:
    for token in (None, "wrong-token", TOKEN + "x", TOKEN[:-1]):
        answer = _scrape(stack, token)
        assert answer.status_code == 401, answer.text
        assert answer.headers["content-type"].startswith("application/json")
        assert answer.json()["code"] == "unauthenticated"
        assert "PLATFORM_METRICS_TOKEN" in answer.json()["detail"]
    answer = _scrape(stack)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    assert "<html" not in answer.text.lower()


def test_the_exposition_is_promtool_clean_and_holds_exactly_the_listed_metrics(stack: PlatformStack) -> None:
    body = _every_service_answers(stack)
    checked = subprocess.run([_tool("promtool"), "check", "metrics"], input=body, capture_output=True, text=True,
                             timeout=60)
    assert checked.returncode == 0, f"promtool check metrics:\n{checked.stdout}{checked.stderr}"
    families = {family.name: family for family in text_string_to_metric_families(body)}
    # the parser names a counter's family without `_total`
    exposed = {name + "_total" if family.type == "counter" else name for name, family in families.items()}
    assert exposed == metric_names.family_names(), (
        f"missing: {sorted(metric_names.family_names() - exposed)}, unlisted: {sorted(exposed - metric_names.family_names())}")
    samples = _samples(body)
    for service in SERVICES:
        assert _sum(samples, "simulusion_metrics_replies", from_service=service) >= 1, f"{service} did not answer"
        assert _sum(samples, "simulusion_nats_connected", service=service) >= 1, service


def test_every_label_set_is_the_listed_one_and_bounded(stack: PlatformStack) -> None:
    with platform_sdk.connect("cartpole", url=stack.url) as env:
        env.reset(seed=0)
        env.step(0)
    httpx.get(f"{stack.url}/v0/sessions/{'f' * 32}", timeout=30)  # a raw path with an id: its template counts
    httpx.get(f"{stack.url}/no/such/page/{'e' * 32}", timeout=30)
    body = _scrape(stack).text
    specs = {spec.name: spec for spec in metric_names.EXPORTED}
    for family in text_string_to_metric_families(body):
        spec = specs[family.name + "_total" if family.type == "counter" else family.name]
        allowed = set(spec.labels) | set(metric_names.MERGE_LABELS) | ({"le"} if spec.kind == "histogram" else set())
        for sample in family.samples:
            assert set(sample.labels) == allowed - ({"le"} if not sample.name.endswith("_bucket") else set()), (
                sample.name, sample.labels)
            for name, value in sample.labels.items():
                if name != metric_names.REPLICA_LABEL:
                    assert not SESSION_ID_LIKE.match(value), (sample.name, name, value)
    routes = {dict(labels)["route"] for (name, labels) in _samples(body) if name == "simulusion_gateway_http_requests_total"}
    assert "/v0/sessions/{session_id}" in routes
    assert all("f" * 32 not in route and "e" * 32 not in route for route in routes), routes


def test_the_metrics_move_when_a_session_is_created_stepped_and_closed(stack: PlatformStack) -> None:
    before = _samples(_scrape(stack).text)
    steps = 25
    for direct in (True, False):
        with platform_sdk.connect("cartpole", url=stack.url, record=True, direct=direct) as env:
            assert env.step_path == ("direct" if direct else "gateway")
            env.reset(seed=0)
            for i in range(steps):
                _, _, terminated, truncated, _ = env.step(i % 2)
                if terminated or truncated:
                    env.reset()
    _step_as_a_web_page(stack)
    refused = httpx.post(f"{stack.url}/v0/sessions", json={"env_id": "no-such-env"}, timeout=30)
    assert refused.status_code == 404

    def moved() -> dict[tuple[str, frozenset[tuple[str, str]]], float] | None:
        after = _samples(_scrape(stack).text)
        written = _sum(after, "simulusion_recorder_written_steps_total") - _sum(before, "simulusion_recorder_written_steps_total")
        closed = (_sum(after, "simulusion_broker_sessions", environment="cartpole", state="closed")
                  - _sum(before, "simulusion_broker_sessions", environment="cartpole", state="closed"))
        return after if written >= 2 * steps and closed >= 3 else None

    after = wait_for(moved, timeout=30, what="the recorder's written steps and the closed sessions")

    def grew(name: str, **labels: str) -> float:
        return _sum(after, name, **labels) - _sum(before, name, **labels)

    assert grew("simulusion_broker_sessions_created_total", environment="cartpole") == 3
    assert grew("simulusion_broker_session_create_failures_total", reason="not_found") == 1
    assert grew("simulusion_envhost_step_duration_seconds_count", path="direct") >= steps
    assert grew("simulusion_envhost_step_duration_seconds_count", path="gateway") >= steps
    assert grew("simulusion_envhost_step_duration_seconds_sum", path="direct") > 0
    assert grew("simulusion_gateway_stream_request_duration_seconds_count", path="gateway") >= steps
    assert grew("simulusion_gateway_stream_request_duration_seconds_count", path="browser") == 2
    assert grew("simulusion_gateway_http_requests_total", route="/v0/sessions", method="POST", status="201") >= 2
    assert grew("simulusion_gateway_http_requests_total", route="/v0/sessions", method="POST", status="404") == 1
    assert grew("simulusion_recorder_written_bytes_total") > 0
    assert _sum(after, "simulusion_jetstream_stream_messages", stream="PLATFORM_SESSIONS") > 0
    assert _sum(after, "simulusion_recorder_pending_messages") >= 0
    assert _sum(after, "simulusion_broker_live_env_hosts") == 1
    assert _sum(after, "simulusion_envhost_instances", environment="cartpole", state="claimed") == 0


def _step_as_a_web_page(stack: PlatformStack) -> None:
    """A session stepped as the Session page steps it: a WebSocket whose handshake has an Origin
    header (every browser's has), a JSON reset and a binary step."""
    session = httpx.post(f"{stack.url}/v0/sessions", json={"env_id": "cartpole"}, timeout=30).json()
    url = stack.url.replace("http", "ws", 1) + f"/v0/sessions/{session['id']}/stream"
    with ws_connect(url, origin=stack.url, open_timeout=30) as page:
        page.send(json.dumps({"id": 1, "op": "reset", "seed": 0}))
        assert "result" in json.loads(page.recv())
        request = env_pb.EnvRequest(id=2)
        request.step.action.discrete = 1
        page.send(request.SerializeToString())
        assert env_pb.EnvResponse.FromString(page.recv()).HasField("step")
    assert httpx.delete(f"{stack.url}/v0/sessions/{session['id']}", timeout=30).status_code in (200, 204)


def _prometheus_config(stack: PlatformStack, path: Path) -> None:
    target = stack.url.removeprefix("http://")
    jobs = []
    for job, token in (("platform", TOKEN), ("wrong_token", "not-the-token")):
        jobs.append(f"""  - job_name: {job}
    scrape_interval: 1s
    scrape_timeout: 1s
    metrics_path: /metrics
    authorization:
      credentials: {token}
    static_configs:
      - targets: ["{target}"]
""")
    path.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n" + "".join(jobs))


def _query(port: int, expression: str) -> list[dict[str, Any]]:
    answer = httpx.get(f"http://127.0.0.1:{port}/api/v1/query", params={"query": expression}, timeout=10)
    answer.raise_for_status()
    result: list[dict[str, Any]] = answer.json()["data"]["result"]
    return result


def test_a_real_prometheus_scrapes_the_platform_with_the_token_and_not_without(
        stack: PlatformStack, tmp_path: Path) -> None:
    config = tmp_path / "prometheus.yml"
    _prometheus_config(stack, config)
    checked = subprocess.run([_tool("promtool"), "check", "config", str(config)], capture_output=True, text=True,
                             timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    port = free_port()
    log = (tmp_path / "prometheus.log").open("w")
    server = subprocess.Popen([_tool("prometheus"), f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                               f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT)
    try:
        def up(job: str) -> float | None:
            try:
                result = _query(port, f'up{{job="{job}"}}')
            except httpx.HTTPError:
                return None
            return float(result[0]["value"][1]) if result else None

        wait_for(lambda: up("platform") == 1.0, timeout=60, what="up == 1 for the job with the token")
        wait_for(lambda: up("wrong_token") == 0.0, timeout=30, what="up == 0 for the job with a wrong token")
        for expression in ('simulusion_nats_connected{job="platform",service="broker"}',
                           'simulusion_envhost_step_duration_seconds_count{job="platform"}',
                           'simulusion_recorder_pending_messages{job="platform"}',
                           'simulusion_jetstream_stream_messages{job="platform"}',
                           'simulusion_metrics_replies{job="platform",from_service="evals"}',
                           'simulusion_gateway_http_requests_total{job="platform"}'):
            assert wait_for(lambda expression=expression: _query(port, expression), timeout=15, what=expression)
        assert not _query(port, 'simulusion_nats_connected{job="wrong_token"}')
        scraped = httpx.get(f"http://127.0.0.1:{port}/api/v1/targets", timeout=10).json()["data"]["activeTargets"]
        wrong = next(t for t in scraped if t["labels"]["job"] == "wrong_token")
        assert "401" in wrong["lastError"], wrong["lastError"]
    finally:
        stop_process(server)
        log.close()
