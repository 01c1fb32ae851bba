"""The environment server: hosts one Gymnasium environment over the environment protocol.

Run it with ``python -m platform_sdk --gym-id CartPole-v1`` (see `platform_sdk.server.cli`).
Modules: `cli` (arguments, start-up, signals), `factory` (build the env), `instance` (the env,
its snapshots and the commands, no gRPC), `servicer` (the gRPC glue), `snapshots` (capture and
restore the full state), `actions` (decode and check actions), `frames` (JPEG frames).
"""
