"""One trace follows a step from the SDK through the gateway and env host onto the bus: a single
session's step, and a vector session's step (one batch of every sub-environment's step)."""

from __future__ import annotations

import asyncio

import nats
import numpy as np
from platform_bus import flush_queued
import platform_sdk
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from platform_contracts import subjects


def test_the_sdk_trace_id_reaches_the_step_event_headers(platform_stack):
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())
    tracer = trace.get_tracer("test")
    received: list[dict] = []

    async def collect(sid: str, ready: asyncio.Event, done: asyncio.Event) -> None:
        nc = await nats.connect(platform_stack.nats_url)

        async def handler(msg):
            received.append(dict(msg.headers or {}))
            if (msg.headers or {}).get("Nats-Msg-Id", "").endswith(":2"):  # the step after the reset
                done.set()

        await nc.subscribe(subjects.session_steps(sid), cb=handler)
        await flush_queued(nc)
        ready.set()
        await asyncio.wait_for(done.wait(), 30)
        await nc.close()

    env = platform_sdk.connect("cartpole", url=platform_stack.url, record=True)
    try:
        env.reset(seed=0)
        loop = asyncio.new_event_loop()
        ready, done = asyncio.Event(), asyncio.Event()
        task = loop.create_task(collect(env.session_id, ready, done))
        loop.run_until_complete(ready.wait())
        with tracer.start_as_current_span("agent-step") as span:
            trace_id = format(span.get_span_context().trace_id, "032x")
            env.step(0)
        loop.run_until_complete(task)
        loop.close()
    finally:
        env.close()
    step_event = next(h for h in received if h.get("Nats-Msg-Id", "").endswith(":2"))
    assert trace_id in step_event.get("traceparent", ""), step_event


def test_a_vector_step_carries_the_sdk_trace_id_onto_the_bus(platform_stack):
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())
    tracer = trace.get_tracer("test")
    received: list[dict] = []
    trace_ids: list[str] = []

    async def collect(sid: str, ready: asyncio.Event, done: asyncio.Event) -> None:
        nc = await nats.connect(platform_stack.nats_url)

        async def handler(msg):
            received.append(dict(msg.headers or {}))
            if trace_ids and trace_ids[0] in (msg.headers or {}).get("traceparent", ""):
                done.set()

        await nc.subscribe(subjects.session_step_batches(sid), cb=handler)
        await flush_queued(nc)
        ready.set()
        await asyncio.wait_for(done.wait(), 30)
        await nc.close()

    envs = platform_sdk.make_vec("cartpole", 2, url=platform_stack.url, record=True)
    try:
        envs.reset(seed=0)
        loop = asyncio.new_event_loop()
        ready, done = asyncio.Event(), asyncio.Event()
        task = loop.create_task(collect(envs.session_id, ready, done))
        loop.run_until_complete(ready.wait())
        with tracer.start_as_current_span("agent-vector-step") as span:
            trace_ids.append(format(span.get_span_context().trace_id, "032x"))
            envs.step(np.zeros(2, dtype=np.int64))
        loop.run_until_complete(task)
        loop.close()
    finally:
        envs.close()
    traced = [h for h in received if trace_ids[0] in h.get("traceparent", "")]
    assert traced, received
    assert ":batch:" in traced[0].get("Nats-Msg-Id", ""), "the vector step's events travel as one batch"
