"""Which hosted environments get painted frames (`platform_contracts.painted_frames`).

A recorded step of such an environment sends, instead of its rendered frame, a `Frame` naming
the painter and the environment's constants; the recorder paints the picture from the recorded
observation. That is only right when the recorded observation is the environment's own state:
the environment must be exactly Gymnasium's (not a subclass, which may draw otherwise), rendering
`rgb_array` at its usual size, and every wrapper around it one known to pass the observation on
unchanged (Gymnasium's `TimeLimit`, `OrderEnforcing`, `PassiveEnvChecker`, and a world-change
timeline without sensor changes). Any other wrapper (it may normalise or stack observations)
means the frame is rendered as usual.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymnasium.envs.classic_control.cartpole import CartPoleEnv
from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker, TimeLimit
from platform_contracts.painted_frames import CARTPOLE_SIZE, cartpole_frame
from platform_envs.world_change_timeline import WorldChangeTimeline
from simulusion.env.v1 import environment_pb2 as env_pb

_PASSING_WRAPPERS = (OrderEnforcing, PassiveEnvChecker, TimeLimit)

Painter = Callable[[int], env_pb.Frame]  # JPEG quality -> the current step's painted Frame


def _keeps_observation(env: Any) -> bool:
    layer = env
    while layer is not getattr(layer, "unwrapped", layer):
        if isinstance(layer, WorldChangeTimeline):
            if not layer.keeps_observation:
                return False
        elif type(layer) not in _PASSING_WRAPPERS:
            return False
        layer = layer.env
    return True


def frame_painter(env: Any) -> Painter | None:
    """How to make the painted frame of `env`'s current step; None when its frames must be
    rendered (see the module's docstring)."""
    inner = getattr(env, "unwrapped", None)
    if type(inner) is not CartPoleEnv or inner.render_mode != "rgb_array":
        return None
    if (inner.screen_height, inner.screen_width) != CARTPOLE_SIZE or not _keeps_observation(env):
        return None
    return lambda quality: cartpole_frame(float(inner.length), float(inner.x_threshold), quality)
