"""Private test fixtures: real nats-server, env servers, databases."""
