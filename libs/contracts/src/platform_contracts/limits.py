"""The platform's protocol limits, defined once.

Every service, the SDK and the gateway's API description import these; a limit written as a
number anywhere else is a bug. New limits go here too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from platform_contracts.session_kwargs import WORLD_CHANGES

# Holds (`HoldRequest`): a number of steps taken in one request.
MAX_HOLD_STEPS = 10_000
MAX_HOLD_STEPS_WITH_FRAMES = 256  # when every step brings back a JPEG frame

# Agent data (`StepRequest.agent`, `HoldRequest.agent`).
MAX_AGENT_NAMES_PER_STEP = 32
MAX_AGENT_NAMES_PER_RECORDING = 256
MAX_AGENT_LIST_LENGTH = 256  # numbers in one list value
AGENT_NAME_PATTERN = r"[A-Za-z0-9_.-]+"
AGENT_NAME = re.compile(AGENT_NAME_PATTERN)
AGENT_NAME_CHARACTERS = "letters, digits, '_', '.' and '-'"  # what AGENT_NAME_PATTERN takes, in words

# Reset seeds (`ResetRequest.seed` is an int64; Gymnasium takes only seeds >= 0).
# The most GPUs one catalog entry may ask for (a node with more is rare; a typo like 80 is refused).
MAX_ENTRY_GPUS = 16
MIN_SEED = 0
MAX_SEED = 2**63 - 1

# A recording or saved snapshot id names a folder: 63 characters of any kind fit a file name
# (255 bytes of UTF-8). The platform's own ids are far shorter (`s-` and 12 hex digits).
MAX_STORED_ID_LENGTH = 63

# Vector sessions: sub-environments of one session.
MAX_NUM_ENVS = 256

# JPEG quality of a session's frames.
MIN_JPEG_QUALITY = 1
MAX_JPEG_QUALITY = 100
DEFAULT_JPEG_QUALITY = 90

# The largest NATS message the platform's nats-server takes (its max_payload; NATS's own
# default is 1 MB, too small for saved snapshot states and step event batches with frames).
NATS_MAX_PAYLOAD = 16 * 1024 * 1024
# What a client assumes when the server does not say (nats-server's default).
NATS_DEFAULT_MAX_PAYLOAD = 1024 * 1024

# The most one `recordings.read` request returns, so a file of any size is read in pieces
# that fit a NATS message.
MAX_RECORDING_READ_BYTES = 4 * 1024 * 1024

# The largest comparison document the recorder stores (`POST /v0/comparisons`, as stored: compact
# JSON with its id and created). Its reward windows are most of it: 6,000 steps at a window of 50
# are 120 windows of ~30 bytes per agent, so this holds ~140,000 windows in all.
MAX_COMPARISON_BYTES = 4 * 1024 * 1024

# The largest gRPC message between the env host and an environment server (frames and
# observations can be large: gRPC's default is 4 MiB), and the largest step link frame.
MAX_GRPC_MESSAGE_BYTES = 256 * 1024 * 1024
MAX_STEP_LINK_FRAME_BYTES = 256 * 1024 * 1024


def max_hold_steps(frames: bool) -> int:
    """The most steps one hold may take, with or without a frame after every step."""
    return MAX_HOLD_STEPS_WITH_FRAMES if frames else MAX_HOLD_STEPS

# Step tickets (the direct path, SDK -> env host): a ticket only opens a step link, so it lives
# a minute; the link it opened stays up after that.
STEP_TICKET_TTL_S = 60

# Uploaded Doom WADs (`POST /v0/doom/wads`): the largest file taken (their names: platform_contracts.names).
MAX_WAD_BYTES = 20 * 1024 * 1024
# A session's keyword arguments (`POST /v0/sessions`' `kwargs`, the `kwargs_json` of
# `SessionOptions`) as JSON (`json.dumps`, as the gateway writes them), and the entries of its `world_changes` timeline (one of
# those kwargs). Both travel in NATS messages and are stored in the session's row: far below
# NATS_MAX_PAYLOAD. 10,000 changes of ~70 bytes each fit in the kwargs' bytes.
MAX_KWARGS_JSON_BYTES = 1024 * 1024
MAX_WORLD_CHANGES = 10_000

# Request bodies of the REST API, as sent (JSON with any spacing): the gateway refuses a body
# over its route's limit with a 413 before reading it (a declared Content-Length) or as soon as
# the bytes streamed pass it (platform_gateway.request_bounds). Each is far below
# NATS_MAX_PAYLOAD: what the gateway takes, the bus carries.
MAX_SESSION_CREATE_BODY_BYTES = 2 * MAX_KWARGS_JSON_BYTES  # the kwargs plus the other options
# reset, step and hold: one action (and reset options, agent data) for up to MAX_NUM_ENVS
# sub-environments: a few KB in practice.
MAX_COMMAND_BODY_BYTES = 1024 * 1024
# A comparison as sent may be indented: twice what the recorder stores (compact).
MAX_COMPARISON_BODY_BYTES = 2 * MAX_COMPARISON_BYTES
# Every other route (tokens, teams, members, snapshots' labels, restores, tickets): a few fields.
MAX_DEFAULT_BODY_BYTES = 64 * 1024
# A training run's metric points (POST /v0/runs/{id}/metrics): up to 5000 points, each a name
# of up to 128 characters, a step, a value, a time and frames: ~250 bytes at their longest,
# with room for spacing. A run's create or change (POST /v0/runs, PATCH /v0/runs/{id}): up to
# 256 hparams (and summary values) of up to 1 KiB and 256 session and recording ids.
MAX_RUN_POINTS_PER_REQUEST = 5000
MAX_RUN_METRICS_BODY_BYTES = 4 * 1024 * 1024
MAX_RUN_BODY_BYTES = 2 * 1024 * 1024
# An experiment (POST /v0/experiments): its command, and its variables (names of at most 128
# characters); the body's limit holds all of them at their longest even with every character
# escaped in JSON (6 bytes each), so a valid experiment is never a 413.
MAX_EXPERIMENT_COMMAND_CHARS = 16 * 1024
MAX_EXPERIMENT_ENV_VARIABLES = 32
MAX_EXPERIMENT_ENV_VALUE_CHARS = 1024
MAX_EXPERIMENT_BODY_BYTES = 6 * (MAX_EXPERIMENT_COMMAND_CHARS + 4 * 1024
                                 + MAX_EXPERIMENT_ENV_VARIABLES * (128 + MAX_EXPERIMENT_ENV_VALUE_CHARS + 8))


def kwargs_problem(kwargs: Mapping[str, Any]) -> str | None:
    """Why a session's `kwargs` are over their limits (MAX_KWARGS_JSON_BYTES as JSON,
    MAX_WORLD_CHANGES timeline entries), in one sentence naming the field; None when they fit."""
    timeline = kwargs.get(WORLD_CHANGES)
    if isinstance(timeline, list) and len(timeline) > MAX_WORLD_CHANGES:
        return (f"kwargs.{WORLD_CHANGES} has {len(timeline):,} changes: a timeline has at most "
                f"{MAX_WORLD_CHANGES:,}")
    size = len(json.dumps(kwargs))
    if size > MAX_KWARGS_JSON_BYTES:
        return (f"kwargs are {size:,} bytes as JSON: at most {MAX_KWARGS_JSON_BYTES:,} bytes "
                f"({MAX_KWARGS_JSON_BYTES >> 20} MiB); pass large data to the environment another way "
                "(a file it reads, a catalog entry)")
    return None
