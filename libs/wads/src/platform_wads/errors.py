"""The WAD store's errors, raised by the store (`platform_wads.store`) and its backends."""

from __future__ import annotations


class WadStoreError(Exception):
    """The store's setting is unusable or its storage refuses; the message names the variable."""


class WadNotFoundError(WadStoreError, KeyError):
    """No WAD with that id; the message names the ids there are."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
