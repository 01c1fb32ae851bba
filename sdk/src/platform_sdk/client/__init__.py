"""The SDK client: sessions over REST, steps over the WebSocket stream."""
