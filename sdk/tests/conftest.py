"""The SDK's tests: the client, the agents, the environment server and the launcher. The
environment server runs as a real process through `platform_testing.env_server_client`; the
catalog families' own tests are the environments' (libs/environments/tests)."""
