"""The run command's options (`python -m platform_sdk.agents.run --help`), checked together."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from platform_contracts.session_kwargs import ENDLESS

from platform_sdk.agents.common_cli import OneLineParser, json_object, json_object_file, positive_int

PROG = "platform-agent"
DEFAULT_WINDOW = 1000  # an endless run's steps per log line
DEFAULT_TEST_WINDOW = 100  # the training mode's test episodes averaged against --reward-goal (ai_traineree's)
TRAINING_OPTIONS = ("reward_goal", "test_every", "epsilon", "checkpoint_every", "resume")  # and --run


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog=PROG,
        description="Run your agent on a platform session: one log line per episode (per --window steps "
                    "when endless), then a JSON summary.",
    )
    parser.add_argument("--agent", required=True, metavar="MODULE:FUNCTION",
                        help="your factory, called with your settings as keyword arguments (the current "
                             "folder is importable), e.g. my_agent:make")
    parser.add_argument("--env", metavar="ID", help="the environment's catalog id (GET /v0/envs lists them)")
    parser.add_argument("--kwargs", type=json_object, default=None, metavar="JSON",
                        help="the environment's arguments, a JSON object")
    parser.add_argument("--config", type=json_object_file, default=None, metavar="FILE",
                        help="a JSON file of keyword arguments for your factory")
    parser.add_argument("--episodes", type=positive_int, metavar="N", help="how many episodes (default 1)")
    parser.add_argument("--seed", type=int, metavar="S", help="the first episode's seed")
    parser.add_argument("--max-steps", type=positive_int, metavar="N",
                        help="end an episode after this many decisions (truncated)")
    parser.add_argument("--record", action="store_true",
                        help="record the session (frames too), to view on the replay page")
    parser.add_argument("--save", type=Path, metavar="PATH",
                        help="save the agent here at the end (and whenever the run stops early)")
    parser.add_argument("--save-every", type=positive_int, metavar="N",
                        help="also save it every N episodes (every N log windows when --endless)")
    parser.add_argument("--load", type=Path, metavar="PATH", help="continue from a saved agent")
    parser.add_argument("--endless", action="store_true",
                        help="no time limits: an environment that still ends restarts in place")
    parser.add_argument("--steps", type=positive_int, metavar="N", help="stop after N steps")
    parser.add_argument("--window", type=positive_int, metavar="N",
                        help=f"with --endless, one log line per N steps (default {DEFAULT_WINDOW}); with --reward-goal, "
                             f"the test episodes averaged (default {DEFAULT_TEST_WINDOW})")
    parser.add_argument("--life", metavar="NAME", help="record into the life NAME (needs --record)")
    parser.add_argument("--frame-every", type=positive_int, metavar="N", help="keep one frame in N (needs --life)")
    parser.add_argument("--max-frames", type=positive_int, metavar="M",
                        help="never keep more than M frames: the spacing doubles each time a twentieth of M "
                             "is used (needs --life)")
    training = parser.add_argument_group("training mode (docs/training.md)")
    training.add_argument("--reward-goal", type=float, metavar="G",
                          help="stop once the mean score of the last --window test episodes reaches G")
    training.add_argument("--test-every", type=positive_int, metavar="K",
                          help="every K-th episode is a greedy test (the agent's set_training(False), epsilon 0), "
                               "recorded with agent.test_episode = 1")
    training.add_argument("--epsilon", metavar="SCHEDULE",
                          help="hand the agent an exploration epsilon per training episode (its set_epsilon): a "
                               "number, linear:START,END,EPISODES, exp:START,END,DECAY or piecewise:E=V,E=V,...")
    training.add_argument("--checkpoint-every", type=positive_int, metavar="N",
                          help="every N episodes save the agent (--save PATH) and the runner's state beside it "
                               "(PATH.runner.json)")
    training.add_argument("--resume", action="store_true",
                          help="continue from the last checkpoint at --save PATH (a fresh start when there is none)")
    training.add_argument("--run", metavar="NAME",
                          help="log every episode's score into the training run NAME (Runs page); the training "
                               "mode does by default, as '<agent> on <env>'")
    extras = parser.add_argument_group("platform")
    extras.add_argument("--url", help="the platform; default PLATFORM_URL, then http://127.0.0.1:8000")
    extras.add_argument("--token", metavar="T", help="API token; default PLATFORM_TOKEN")
    extras.add_argument("--from-saved-snapshot", metavar="SNAPSHOT_ID", dest="saved_snapshot",
                        help="start the environment at a saved snapshot (env.save_snapshot) instead of a reset; "
                             "its environment and arguments are used")
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The arguments, checked together; a bad combination exits 2 with one line."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.env is None and args.saved_snapshot is None:
        parser.error("the following arguments are required: --env")
    if args.life is not None and not args.record:
        parser.error("argument --life: needs --record (a life is a recording)")
    for name in ("frame_every", "max_frames"):
        if getattr(args, name) is not None and args.life is None:
            parser.error(f"argument --{name.replace('_', '-')}: thins the frames of a life: needs --life NAME")
    if args.save_every is not None and args.save is None:
        parser.error("argument --save-every: needs --save PATH (where to save the agent)")
    if args.load is not None and not args.load.exists():
        parser.error(f"argument --load: {args.load} does not exist")
    if args.saved_snapshot is not None and (args.kwargs is not None or args.endless):
        parser.error("argument --from-saved-snapshot: the snapshot's environment arguments are used; "
                     "leave out --kwargs and --endless")
    args.training = any(getattr(args, name) not in (None, False) for name in TRAINING_OPTIONS) or args.run is not None
    if args.training:
        check_training(parser, args)
    if args.endless:
        if args.episodes is not None:
            parser.error("argument --episodes: an endless run has no episodes to count; give --steps")
        if args.max_steps is not None:
            parser.error("argument --max-steps: an endless run never ends an episode; give --steps")
        args.window = args.window or DEFAULT_WINDOW
        args.kwargs = {**(args.kwargs or {}), ENDLESS: True}
    elif args.training:
        args.window = args.window or DEFAULT_TEST_WINDOW
    elif args.window is not None:
        parser.error("argument --window: groups an endless run's log lines (--endless) or the test episodes "
                     "averaged against --reward-goal")
    if args.episodes is None and args.steps is None and not args.endless and args.reward_goal is None:
        args.episodes = 1
    return args


def check_training(parser: OneLineParser, args: argparse.Namespace) -> None:
    """The training mode's options, checked together (a bad combination exits 2 with one line)."""
    if args.endless:
        parser.error("argument --endless: the training mode and --run count episodes; leave out --endless")
    if args.reward_goal is not None and args.test_every is None:
        parser.error("argument --reward-goal: the goal is over test episodes: give --test-every K")
    if args.test_every is not None and args.test_every < 2:
        parser.error("argument --test-every: at least 2 (every episode a test would leave none to train on)")
    if args.epsilon is not None:
        from platform_sdk.agents.schedules import schedule_from_text

        try:
            schedule_from_text(args.epsilon)
        except ValueError as exc:
            parser.error(f"argument --epsilon: {exc}")
    for option in ("checkpoint_every", "resume"):
        if getattr(args, option) not in (None, False) and args.save is None:
            parser.error(f"argument --{option.replace('_', '-')}: needs --save PATH (where the agent and the "
                         "runner's state are kept)")
    if args.checkpoint_every is not None and args.save_every is not None:
        parser.error("argument --save-every: --checkpoint-every saves the agent too; give one of the two")
    if args.resume and args.load is not None:
        parser.error("argument --load: --resume loads the agent from --save PATH")
    if args.saved_snapshot is not None:
        parser.error("argument --from-saved-snapshot: the training mode starts its episodes with resets")
