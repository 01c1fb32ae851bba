"""The environment server: hosts a Gymnasium environment over the environment protocol.

Run it with ``python -m platform_sdk --gym-id CartPole-v1`` (see `platform_sdk.server.cli`).
Modules: `cli` (arguments, start-up, signals), `factory` (build the env; endless: no time
limits), `instance` (the env, its snapshots and the commands, no gRPC), `auto_reset` (a step
and the reset after an ending), `holds` (one action for many steps), `state_transfer`
(export_state/import_state), `batch` and `vector` (`--num-envs`: sub-environments), `spec`
(the spec), `servicer` (the gRPC glue), `snapshots` (capture and restore the full state),
`actions` (decode and check actions), `frames` (JPEG frames).
"""

import os

# Environments start processes of their own while the server's gRPC threads run (ViZDoom starts
# its engine on every new game, e.g. when a snapshot is restored). gRPC's fork handlers then run
# in this process and can crash it (SIGSEGV in DoomGame.init under load): they only matter for
# gRPC used across a fork without exec, which nothing here does. Off, before grpc is imported.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")
