"""The platform's catalog environments, hosted by environment servers (the env host's instances).

- `adapters`: Atari (ALE), DeepMind Control, Gymnasium MuJoCo, headless MuJoCo rendering and the
  generators of the broker's built-in catalog files;
- `doom`: ViZDoom scenarios and Freedoom maps;
- `robots`: MuJoCo Menagerie robots (`robots.menagerie` finds or downloads them: `python -m platform_sdk.menagerie`);
- `mujoco_state`: the picklable state of a MuJoCo model and data, for the robots' and DeepMind Control's snapshots;
- `world_change_effects` and `world_change_timeline`: what a world change does to a live
  environment, and the wrapper that applies a session's timeline.

Each family's simulator comes with its extra (`atari`, `dmc`, `mujoco`, `robots`, `doom`) and
is imported only when an environment of the family is made.
"""
