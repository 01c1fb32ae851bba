"""Consumes the step stream and writes recordings."""
