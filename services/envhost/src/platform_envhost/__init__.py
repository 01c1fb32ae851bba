"""Hosts environment instances behind the gRPC environment protocol."""
