"""What the platform takes as a name, defined once: every service, the SDK and the gateway's API
description (its OpenAPI patterns) use these, so the document says exactly what is accepted.

Two kinds:

- **Names that become part of a storage key** (a life's file under `lives/`): ASCII letters,
  digits, `_`, `.` and `-`, beginning with a letter or a digit, so never `.`, `..` or a hidden
  file.
- **Labels** people read (a saved snapshot's label, an API token's name): any text of up to
  `MAX_LABEL_LENGTH` characters except control characters (C0, DEL, C1), Unicode line and
  paragraph separators, and the invisible format characters that change how text around them
  is shown (the bidirectional overrides and isolates such as U+202E, zero-width characters, the
  byte order mark), which would let a label pose as another.

Each pattern is written so that Python's `re`, the JSON Schema (ECMA 262) dialect and the Rust
`regex` crate that pydantic uses read it the same way (no `\\p{...}` classes). In Python, check with
`fullmatch`: `re`'s `$` also matches before a final newline, so `match` would take "robot-1" followed by a newline.
"""

from __future__ import annotations

import re

# -- lives ------------------------------------------------------------------------------------
MAX_LIFE_NAME_LENGTH = 64
LIFE_NAME_PATTERN = rf"^[A-Za-z0-9][A-Za-z0-9_.-]{{0,{MAX_LIFE_NAME_LENGTH - 1}}}$"
LIFE_NAME = re.compile(LIFE_NAME_PATTERN)
LIFE_NAME_RULE = (f"1-{MAX_LIFE_NAME_LENGTH} letters, digits, '_', '.' or '-', beginning with a letter or a "
                  "digit")  # LIFE_NAME_PATTERN in words

# -- Doom WADs (`POST /v0/doom/wads?name=`): a plain file name ending in .wad -------------------
MAX_WAD_NAME_LENGTH = 100
WAD_NAME_PATTERN = rf"^[A-Za-z0-9][A-Za-z0-9 _.()+-]{{0,{MAX_WAD_NAME_LENGTH - 5}}}\.[Ww][Aa][Dd]$"
WAD_NAME = re.compile(WAD_NAME_PATTERN)
WAD_NAME_RULE = (f"a file name ending in .wad, at most {MAX_WAD_NAME_LENGTH} characters of letters, digits, "
                 "spaces and _.()+- (beginning with a letter or a digit)")

# -- labels -----------------------------------------------------------------------------------
MAX_LABEL_LENGTH = 200
# Characters no label may hold: C0 controls and DEL, C1 controls, the soft hyphen, Arabic and
# Syriac format marks, the Mongolian vowel separator, zero-width space/joiners and the LTR/RTL
# marks, line and paragraph separators, the bidirectional embeddings, overrides and isolates,
# word joiner and invisible operators, the byte order mark, interlinear annotation marks.
_NOT_IN_LABELS = (
    "\\x00-\\x1f\\x7f-\\x9f\\xad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u180e\\u200b-\\u200f"
    "\\u2028-\\u202e\\u2060-\\u206f\\ufeff\\ufff9-\\ufffb"
)
LABEL_PATTERN = rf"^[^{_NOT_IN_LABELS}]*$"
LABEL = re.compile(LABEL_PATTERN)
LABEL_RULE = (f"at most {MAX_LABEL_LENGTH} characters, without control characters, line separators or "
              "invisible formatting characters (such as the right-to-left override)")  # in words


def label_problem(label: str) -> str | None:
    """What is wrong with `label` as a label (None: nothing), e.g. for an error message."""
    if len(label) > MAX_LABEL_LENGTH:
        return f"it is {len(label)} characters long: use {LABEL_RULE}"
    found = re.search(f"[{_NOT_IN_LABELS}]", label)
    if found is not None:
        return f"it holds the character U+{ord(found.group()):04X} at position {found.start()}: use {LABEL_RULE}"
    return None


# -- training runs (`/v0/runs`, `platform_sdk.runs`) -------------------------------------------
# A run's id may be chosen by its client, so that logging starts while the platform is away.
MAX_RUN_ID_LENGTH = 68
RUN_ID_PATTERN = r"^run-[A-Za-z0-9_-]{1,64}$"
RUN_ID = re.compile(RUN_ID_PATTERN)
RUN_ID_RULE = "'run-' followed by 1-64 letters, digits, '_' or '-'"  # RUN_ID_PATTERN in words
# A metric's name, as the libraries that log them write them: "loss/actor", "agent/episode/returns",
# "env_runners/episode_return_mean".
MAX_METRIC_NAME_LENGTH = 128
METRIC_NAME_PATTERN = rf"^[A-Za-z0-9_][A-Za-z0-9_.:/-]{{0,{MAX_METRIC_NAME_LENGTH - 1}}}$"
METRIC_NAME = re.compile(METRIC_NAME_PATTERN)
METRIC_NAME_RULE = (f"1-{MAX_METRIC_NAME_LENGTH} letters, digits, '_', '.', ':', '/' or '-', beginning with a "
                    "letter, a digit or '_'")  # METRIC_NAME_PATTERN in words
