"""The environment server: hosts a Gymnasium environment over the environment protocol.

Run it with ``python -m platform_sdk --gym-id CartPole-v1`` (see `platform_sdk.server.cli`).
Modules: `cli` (arguments, start-up, signals), `factory` (build the env; endless: no time
limits), `instance` (the env, its snapshots and the commands, no gRPC), `auto_reset` (a step
and the reset after an ending), `holds` (one action for many steps), `state_transfer`
(export_state/import_state), `batch` and `vector` (`--num-envs`: sub-environments), `spec`
(the spec), `servicer` (the gRPC glue), `snapshots` (capture and restore the full state),
`actions` (decode and check actions), `frames` (JPEG frames).
"""
