"""The Simulusion platform's Python SDK: client, environment server, launcher."""
