"""`/metrics` on the gateway (a real uvicorn and nats-server): who may read it with and without
PLATFORM_METRICS_TOKEN, and its own metrics (HTTP requests by route template)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

TOKEN = "a-metrics-token-0123456789"


def _samples(body: str) -> list[tuple[str, dict[str, str], float]]:
    return [(s.name, s.labels, s.value) for family in text_string_to_metric_families(body) for s in family.samples]


async def test_unset_on_an_open_platform_metrics_is_open_and_never_the_web_app(gateway) -> None:
    await gateway.http.get("/healthz")
    answer = await gateway.http.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples = _samples(answer.text)
    healthz = [value for name, labels, value in samples if name == "simulusion_gateway_http_requests_total"
               and labels["route"] == "/healthz" and labels["status"] == "200" and labels["service"] == "gateway"]
    assert healthz == [1.0]
    assert any(name == "simulusion_metrics_replies" and labels["from_service"] == "gateway"
               for name, labels, _ in samples)


async def test_with_a_token_metrics_needs_it(start_gateway) -> None:
    gateway = await start_gateway(metrics_token=TOKEN)
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": f"Basic {TOKEN}"},
                    {"Authorization": f"Bearer {TOKEN}x"}):
        answer = await gateway.http.get("/metrics", headers=headers)
        assert answer.status_code == 401, headers
        assert answer.json()["code"] == "unauthenticated"
        assert answer.headers["www-authenticate"].startswith("Bearer")
    answer = await gateway.http.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200
    assert "simulusion_nats_connected" in answer.text


async def test_unset_on_a_platform_that_needs_a_token_metrics_is_refused_naming_the_variable(start_gateway) -> None:
    for overrides in ({"mode": "managed"}, {"api_token": "an-api-token-0123456789abcdef"}):
        gateway = await start_gateway(**overrides)
        answer = await gateway.http.get("/metrics")
        assert answer.status_code == 403, overrides
        assert "PLATFORM_METRICS_TOKEN" in answer.json()["detail"]


async def test_a_raw_path_counts_under_its_route_template_and_an_unknown_one_as_unmatched(gateway) -> None:
    await gateway.http.get("/v0/sessions/0123456789abcdef0123456789abcdef")
    await gateway.http.request("TRACE", "/v0/no-such-route/0123456789abcdef")
    samples = _samples((await gateway.http.get("/metrics")).text)
    routes = {(labels["route"], labels["method"]) for name, labels, _ in samples
              if name == "simulusion_gateway_http_requests_total"}
    assert ("/v0/sessions/{session_id}", "GET") in routes
    assert ("unmatched", "other") in routes
    assert not any("0123456789abcdef" in route for route, _ in routes)
