"""The one error the tool reports: a sentence for the user, printed as one line (or, for a failed
setup, one line and the last lines of the server's log), and a non-zero exit."""

from __future__ import annotations


class ToolError(Exception):
    """Something the user can act on; its message is what gpu_server.py prints."""


class Interrupted(Exception):
    """Ctrl-C, taken by a command that handles it itself (`logs -f`): the tool exits 130, quietly."""
