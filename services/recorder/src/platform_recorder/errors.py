"""The recorder's errors: one base class, subclasses for what callers can tell apart."""

from __future__ import annotations


class RecorderError(Exception):
    """Base class of every error raised by platform_recorder."""

    code = "internal"


class InvalidRecordingIdError(RecorderError, ValueError):
    """A recording id that is not a plain folder name (a path separator, `..`, empty)."""

    code = "invalid_argument"


class RecordingNotFoundError(RecorderError, LookupError):
    """No recording (or no finished episode) with that id/index."""

    code = "not_found"


class InvalidSnapshotIdError(RecorderError, ValueError):
    """A saved snapshot id that cannot name a folder (a path separator, `..`, empty)."""

    code = "invalid_argument"


class SavedSnapshotNotFoundError(RecorderError, LookupError):
    """No saved snapshot with that id."""

    code = "not_found"


class SavedSnapshotCorruptError(RecorderError):
    """A saved snapshot whose state file is missing or does not match its size or checksum."""

    code = "internal"


class InvalidLifeNameError(RecorderError, ValueError):
    """A life name that is not 1-64 letters, digits, `_`, `.` or `-`."""

    code = "invalid_argument"


class InvalidRequestError(RecorderError, ValueError):
    """A request the API cannot take (a missing field, a wrong type, a value out of range)."""

    code = "invalid_argument"


class InvalidMetaError(RecorderError, ValueError):
    """A meta.json that is not a recording's (not a JSON object, no id, an unknown status)."""

    code = "internal"
