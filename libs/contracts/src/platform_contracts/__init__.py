"""Helpers around the generated protobuf contracts: subject names, value and space codecs,
trace-context propagation. The generated modules live in the `simulusion` package."""
