"""REST and WebSocket API of the platform."""
