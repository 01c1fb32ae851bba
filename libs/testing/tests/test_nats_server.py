async def test_x(nats_client):
    js = nats_client.jetstream()
    await js.add_stream(name="X", subjects=["x.>"])
    ack = await js.publish("x.a", b"1")
    assert ack.seq == 1
