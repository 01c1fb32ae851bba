"""What world changes do (`platform_envs.world_change_effects` through the environment server's
`WorldChangeTimeline` wrapper): on Gymnasium MuJoCo (HalfCheetah, Ant), DeepMind Control, a raw
MuJoCo environment with `model`/`data` (as the Menagerie robots have) and CartPole."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import mujoco
import numpy as np
import pytest
from gymnasium import spaces as gs
from platform_contracts.world_changes import WorldChangeError
from platform_envs.adapters.dmc import make_env as make_dmc
from platform_envs.world_change_effects import find_mujoco, live_facts, sensor_space
from platform_envs.world_change_timeline import WorldChangeTimeline, checked_timeline, with_timeline

TOY_XML = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="box" pos="0 0 0.5"><freejoint/><geom name="box_geom" type="box" size="0.1 0.1 0.1" mass="1"/></body>
    <body name="target" mocap="true" pos="1 0 0.2"><geom type="sphere" size="0.05" contype="0" conaffinity="0"/></body>
    <body name="post" pos="-1 0 0"><geom name="post_geom" type="cylinder" size="0.05 0.3"/></body>
    <body name="arm" pos="0 1 0.5">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom name="arm_geom" type="capsule" fromto="0 0 0 0.4 0 0" size="0.03" mass="0.5"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="motor" joint="hinge" gear="2"/>
    <position name="servo" joint="hinge" kp="10"/>
  </actuator>
</mujoco>
"""


class RawMujocoEnv(gymnasium.Env[np.ndarray, np.ndarray]):
    """A raw MuJoCo environment reached through `model` and `data`, as the Menagerie robots are."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(self) -> None:
        self.model = mujoco.MjModel.from_xml_string(TOY_XML)
        self.data = mujoco.MjData(self.model)
        size = self.model.nq + self.model.nv + 3
        self.observation_space = gs.Box(-np.inf, np.inf, (size,), np.float64)
        self.action_space = gs.Box(-1.0, 1.0, (2,), np.float64)

    def _observation(self) -> np.ndarray:
        return np.concatenate([self.data.qpos, self.data.qvel, self.data.mocap_pos[0]])

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        mujoco.mj_resetData(self.model, self.data)
        mujoco.mj_forward(self.model, self.data)
        return self._observation(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.data.ctrl[:] = action
        mujoco.mj_step(self.model, self.data, nstep=5)
        return self._observation(), 0.0, False, False, {}


class ScreenEnv(gymnasium.Env[np.ndarray, int]):
    """A uint8 image observation, as an Atari screen is."""

    observation_space = gs.Box(0, 255, (2, 3, 3), np.uint8)
    action_space = gs.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        return np.full((2, 3, 3), 250, np.uint8), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        return np.full((2, 3, 3), 3, np.uint8), 0.0, False, False, {}


def _wrapped(env: Any, timeline: list[dict[str, Any]]) -> WorldChangeTimeline:
    wrapped = with_timeline(env, checked_timeline(env, timeline, "test"))
    assert isinstance(wrapped, WorldChangeTimeline)
    return wrapped


def _actions(space: gs.Space, count: int) -> list[Any]:
    space.seed(0)
    return [space.sample() for _ in range(count)]


def _flat(space: gs.Space, observation: Any) -> np.ndarray:
    return np.asarray(gs.flatten(space, observation), np.float64)


def _run(make: Any, timeline: list[dict[str, Any]], steps: int, seed: int = 3) -> tuple[list[np.ndarray], list[dict]]:
    """The flat observations (the reset's first) and infos of a seeded run of fixed actions."""
    env = make()
    space = env.observation_space
    if timeline:
        env = _wrapped(env, timeline)
    observation, info = env.reset(seed=seed)
    seen, infos = [_flat(space, observation)], [info]
    for action in _actions(env.action_space, steps):
        observation, _, terminated, truncated, info = env.step(action)
        seen.append(_flat(space, observation))
        infos.append(info)
        assert not (terminated or truncated)
    env.close()
    return seen, infos


def _first_difference(a: list[np.ndarray], b: list[np.ndarray]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if not np.array_equal(x, y):
            return i
    return None


def _cheetah() -> Any:
    return gymnasium.make("HalfCheetah-v5")


def _dmc_cartpole() -> Any:
    return make_dmc(domain="cartpole", task="swingup")


@pytest.mark.parametrize(("make", "body"), [(_cheetah, "torso"), (_dmc_cartpole, "pole_1"), (RawMujocoEnv, "arm")],
                         ids=["halfcheetah", "dmc-cartpole", "raw-mujoco"])
def test_a_mass_change_alters_the_dynamics_from_exactly_step_at(make, body) -> None:
    at = 6
    plain, _ = _run(make, [], 14)
    heavier, _ = _run(make, [{"at": at, "change": "mass", "body": body, "scale": 4.0}], 14)
    # seen[i + 1] is the observation after step i: step `at` is the first under the change
    assert _first_difference(plain, heavier) == at + 1
    undone, _ = _run(make, [{"at": at, "change": "mass", "body": body, "scale": 1.0}], 14)
    assert _first_difference(plain, undone) is None  # relative to the model as built


def test_mass_and_inertia_scale_from_the_model_as_built_and_constants_follow() -> None:
    env = _wrapped(_cheetah(), [
        {"at": 1, "change": "mass", "body": "torso", "scale": 2.0},
        {"at": 2, "change": "mass", "body": "torso", "scale": 3.0},
        {"at": 3, "change": "mass", "body": "torso", "scale": 1.0},
    ])
    model = env.unwrapped.model
    torso = model.body("torso").id
    mass, inertia, subtree = model.body_mass[torso], model.body_inertia[torso].copy(), model.body_subtreemass[0]
    env.reset(seed=0)
    env.step(env.action_space.sample())
    env.step(env.action_space.sample())
    assert model.body_mass[torso] == 2.0 * mass and np.array_equal(model.body_inertia[torso], 2.0 * inertia)
    assert model.body_subtreemass[0] == pytest.approx(subtree + mass)  # mj_setConst ran
    env.step(env.action_space.sample())
    assert model.body_mass[torso] == 3.0 * mass  # not 6: relative to the model as built
    env.step(env.action_space.sample())
    assert model.body_mass[torso] == mass and model.body_subtreemass[0] == subtree


def test_changes_last_through_resets() -> None:
    env = _wrapped(gymnasium.make("HalfCheetah-v5", max_episode_steps=3),
                   [{"at": 2, "change": "mass", "body": "torso", "scale": 5.0}])
    model = env.unwrapped.model
    built = model.body_mass[model.body("torso").id]
    env.reset(seed=1)
    truncated = False
    while not truncated:
        *_, truncated, _ = env.step(env.action_space.sample())
    env.reset(seed=1)
    env.reset()
    assert model.body_mass[model.body("torso").id] == 5.0 * built and env.session_steps == 3


def test_a_change_due_at_a_reset_is_applied_there() -> None:
    env = _wrapped(_cheetah(), [{"at": 0, "change": "mass", "body": "torso", "scale": 2.0, "reveal": True},
                                {"at": 1, "change": "sensor_offset", "offset": 1.0, "reveal": True}])
    _, info = env.reset(seed=0)
    assert info["world_changes"] == [{"at": 0, "change": "mass", "body": "torso", "scale": 2.0, "reveal": True}]
    assert [record["index"] for record in env.last_applied] == [0]
    env.step(env.action_space.sample())
    true = env.unwrapped._get_obs()
    observation, info = env.reset(seed=0)  # 1 step taken: the sensor change is due here
    assert info["world_changes"][0]["change"] == "sensor_offset"
    assert env.last_applied[0]["session_step"] == 1
    assert np.array_equal(observation, env.last_true_observation + 1.0) and not np.array_equal(true, observation)


def test_friction_of_a_geom_a_body_or_every_geom() -> None:
    env = _wrapped(RawMujocoEnv(), [
        {"at": 0, "change": "friction", "scale": 2.0},
        {"at": 1, "change": "friction", "body": "box", "scale": 0.5},
        {"at": 2, "change": "friction", "geom": "floor", "scale": 3.0},
    ])
    model = env.unwrapped.model
    built = model.geom_friction.copy()
    box, floor = model.geom("box_geom").id, model.geom("floor").id
    env.reset(seed=0)
    assert np.array_equal(model.geom_friction, built * 2.0)
    env.step(np.zeros(2))
    env.step(np.zeros(2))
    assert np.array_equal(model.geom_friction[floor], built[floor] * 2.0)  # at 2: before the third step
    env.step(np.zeros(2))
    assert np.array_equal(model.geom_friction[box], built[box] * 0.5)
    assert np.array_equal(model.geom_friction[floor], built[floor] * 3.0)
    others = [i for i in range(model.ngeom) if i not in (box, floor)]
    assert np.array_equal(model.geom_friction[others], built[others] * 2.0)


def test_motor_strength_scales_gains_and_biases() -> None:
    env = _wrapped(RawMujocoEnv(), [{"at": 0, "change": "motor_strength", "scale": 0.5},
                                    {"at": 1, "change": "motor_strength", "actuator": "servo", "scale": 0.0}])
    model = env.unwrapped.model
    gain, bias = model.actuator_gainprm.copy(), model.actuator_biasprm.copy()
    env.reset(seed=0)
    assert np.array_equal(model.actuator_gainprm[:, 0], gain[:, 0] * 0.5)
    assert np.array_equal(model.actuator_biasprm[:, :3], bias[:, :3] * 0.5)
    assert np.array_equal(model.actuator_gainprm[:, 1:], gain[:, 1:])
    env.step(np.zeros(2))
    env.step(np.zeros(2))
    servo, motor = model.actuator("servo").id, model.actuator("motor").id
    assert model.actuator_gainprm[servo, 0] == 0.0 and np.all(model.actuator_biasprm[servo, :3] == 0.0)
    assert model.actuator_gainprm[motor, 0] == gain[motor, 0] * 0.5
    assert bias[servo, 1] == -10.0  # a position actuator's bias holds -kp


def test_position_moves_free_mocap_and_fixed_bodies() -> None:
    env = _wrapped(RawMujocoEnv(), [
        {"at": 1, "change": "position", "body": "box", "offset": [0.5, 0, 0]},
        {"at": 1, "change": "position", "body": "target", "offset": [0, 0.5, 0]},
        {"at": 1, "change": "position", "body": "post", "offset": [0, 0, 0.25]},
        {"at": 2, "change": "position", "body": "box", "offset": [0.25, 0, 0]},
    ])
    model, data = env.unwrapped.model, env.unwrapped.data
    env.reset(seed=0)
    env.step(np.zeros(2))
    box_x = data.qpos[0]
    env.step(np.zeros(2))  # applied before this step: the box moved now, by 0.5
    assert data.qpos[0] == pytest.approx(box_x + 0.5, abs=1e-3)
    assert np.allclose(data.mocap_pos[0], [1.0, 0.5, 0.2])
    post = model.body("post").id
    assert np.allclose(model.body_pos[post], [-1.0, 0.0, 0.25]) and np.allclose(data.xpos[post], [-1.0, 0.0, 0.25])
    assert model.qpos0[0] == pytest.approx(0.5)
    before = data.qpos[0]
    env.step(np.zeros(2))  # the second move of the box: by the difference, -0.25
    assert data.qpos[0] == pytest.approx(before - 0.25, abs=1e-3)
    env.reset()  # resets start from where the changes put things
    assert data.qpos[0] == pytest.approx(0.25) and np.allclose(data.mocap_pos[0], [1.0, 0.5, 0.2])


def test_position_of_a_free_body_moves_where_a_gymnasium_env_resets() -> None:
    env = _wrapped(gymnasium.make("Ant-v5", reset_noise_scale=0.0),
                   [{"at": 0, "change": "position", "body": "torso", "offset": [1.0, -2.0, 0.5]}])
    env.reset(seed=0)
    data = env.unwrapped.data
    assert np.allclose(data.qpos[:3], [1.0, -2.0, 1.25])
    env.reset(seed=1)
    assert np.allclose(data.qpos[:3], [1.0, -2.0, 1.25])


def test_sensor_offset_and_noise_change_what_the_agent_sees_only() -> None:
    timeline = [
        {"at": 2, "change": "sensor_offset", "offset": [0.01, -0.02], "indices": [0, 2]},
        {"at": 4, "change": "sensor_noise", "std": 0.001, "indices": [1, 3], "seed": 7},
        {"at": 6, "change": "sensor_offset", "offset": 0.0},
        {"at": 6, "change": "sensor_noise", "std": 0.0},
    ]
    env = _wrapped(gymnasium.make("CartPole-v1"), timeline)
    env.reset(seed=0)
    env.action_space.seed(0)
    for step in range(8):
        observation, *_ = env.step(step % 2)
        true = env.unwrapped.state.astype(np.float32)
        if step < 2 or step >= 6:
            assert env.last_true_observation is None and np.array_equal(observation, true)
            continue
        assert np.array_equal(env.last_true_observation, true)
        expected = true.astype(np.float64) + np.array([0.01, 0, -0.02, 0])
        if step >= 4:
            draws = np.random.default_rng([7, step]).standard_normal(4)
            expected[[1, 3]] += draws[[1, 3]] * 0.001
        assert np.allclose(observation, expected.astype(np.float32)), step


def test_sensor_changes_are_clipped_to_the_space_and_rounded_for_integers() -> None:
    env = _wrapped(gymnasium.make("CartPole-v1"), [{"at": 0, "change": "sensor_offset", "offset": 100.0}])
    observation, _ = env.reset(seed=0)
    high = env.observation_space.high
    assert observation[0] == high[0] and observation[2] == high[2]  # +-4.8 and +-0.418: clipped
    assert observation[1] == pytest.approx(env.last_true_observation[1] + 100.0)  # unbounded
    screen = _wrapped(ScreenEnv(), [{"at": 0, "change": "sensor_offset", "offset": 10.4},
                                    {"at": 1, "change": "sensor_noise", "std": 2.0, "indices": [0, 1, 2]}])
    observation, _ = screen.reset(seed=0)
    assert observation.dtype == np.uint8 and np.all(observation == 255)
    observation, *_ = screen.step(0)
    assert observation.dtype == np.uint8 and np.all(observation.ravel()[3:] == 13)
    assert screen.render_is_observation is False


def test_sensor_changes_act_on_the_flat_observation_of_a_dict() -> None:
    env = _wrapped(_dmc_cartpole(), [{"at": 0, "change": "sensor_offset", "offset": [1.0, 2.0], "indices": [0, 4]}])
    observation, _ = env.reset(seed=0)
    true = env.last_true_observation
    assert set(observation) == {"position", "velocity"}
    assert observation["position"][0] == true["position"][0] + 1.0
    assert observation["velocity"][1] == true["velocity"][1] + 2.0
    assert np.array_equal(observation["position"][1:], true["position"][1:])


def test_sensor_noise_is_the_same_for_every_run() -> None:
    timeline = [{"at": 0, "change": "sensor_noise", "std": 0.05}]
    first, _ = _run(_cheetah, timeline, 5)
    second, _ = _run(_cheetah, timeline, 5)
    plain, _ = _run(_cheetah, [], 5)
    assert _first_difference(first, second) is None and _first_difference(first, plain) == 0


def test_reveal_shows_in_that_steps_info_only() -> None:
    entry = {"at": 3, "change": "mass", "body": "torso", "scale": 2.0, "reveal": True}
    _, infos = _run(_cheetah, [entry, {"at": 3, "change": "sensor_offset", "offset": 0.0}], 6)
    told = [i for i, info in enumerate(infos) if "world_changes" in info]
    assert told == [4]  # infos[i + 1] is step i's
    assert infos[4]["world_changes"] == [entry]


def test_mujoco_kinds_on_cartpole_are_refused_at_start_sensor_kinds_allowed() -> None:
    with pytest.raises(WorldChangeError) as info:
        checked_timeline(gymnasium.make("CartPole-v1"), [
            {"at": 0, "change": "sensor_noise", "std": 0.1},
            {"at": 10, "change": "mass", "body": "pole", "scale": 2.0},
        ], "CartPole-v1")
    assert str(info.value) == ("CartPole-v1: world_changes[1].change: mass needs a MuJoCo environment and this one "
                               "is not: it allows sensor_noise, sensor_offset")
    cartpole = gymnasium.make("CartPole-v1")
    assert isinstance(with_timeline(cartpole, checked_timeline(cartpole, [
        {"at": 0, "change": "sensor_noise", "std": 0.1}])), WorldChangeTimeline)


def test_the_live_facts_check_names_bodies_and_indices() -> None:
    with pytest.raises(WorldChangeError, match=r"world_changes\[0\]\.body: no body 'hand': the bodies are torso, "):
        checked_timeline(_cheetah(), [{"at": 0, "change": "mass", "body": "hand", "scale": 2}])
    with pytest.raises(WorldChangeError, match=r"world_changes\[0\]\.indices: index 17 is out of range"):
        checked_timeline(_cheetah(), [{"at": 0, "change": "sensor_noise", "std": 1, "indices": [17]}])


def test_no_timeline_no_wrapper() -> None:
    env = gymnasium.make("CartPole-v1")
    assert with_timeline(env, ()) is env


def test_live_facts_of_each_kind_of_environment() -> None:
    facts = live_facts(RawMujocoEnv())
    assert facts.mujoco and facts.bodies == ("box", "target", "post", "arm")
    assert facts.actuators == ("motor", "servo") and facts.geoms == ("floor", "box_geom", "post_geom", "arm_geom")
    assert facts.observation_size == 7 + 6 + 3 + 1 + 1 and facts.sensors
    dmc = live_facts(_dmc_cartpole())
    assert dmc.mujoco and dmc.bodies == ("cart", "pole_1") and dmc.observation_size == 5
    cartpole = live_facts(gymnasium.make("CartPole-v1"))
    assert (cartpole.mujoco, cartpole.observation_size, cartpole.sensors) == (False, 4, True)
    assert not sensor_space(gs.Discrete(3)) and not sensor_space(gs.Dict({"a": gs.Box(0, 1), "b": gs.Discrete(2)}))
    assert sensor_space(gs.Dict({"a": gs.Box(0, 1), "b": gs.Dict({"c": gs.Box(0, 1, (2,))})}))
    assert find_mujoco(gymnasium.make("CartPole-v1")) is None
