"""What the store keeps about a WAD beside its bytes, and how a WAD's id is made."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

from platform_contracts.teams import DEFAULT_TEAM

# An id is the WAD's content hash: the same file uploaded twice is one WAD.
ID_PATTERN = re.compile(r"^wad-[0-9a-f]{16}$")


def wad_id(sha256_hex: str) -> str:
    """The id of a WAD whose SHA-256 is `sha256_hex`: "wad-" and its first 16 hex digits."""
    return f"wad-{sha256_hex[:16]}"


@dataclass(frozen=True)
class WadRecord:
    """One stored WAD.

    Attributes:
        id: "wad-" and 16 hex digits of its SHA-256.
        name: the file name it was uploaded as, e.g. "memory_test.wad".
        size: bytes.
        sha256: its SHA-256, hex.
        kind: "PWAD" or "IWAD".
        maps: its maps, in file order.
        uploaded_at: Unix seconds of the first upload.
        teams: the teams that uploaded it (PLATFORM_MODE=managed): only they see and use it.
            Empty in a record written before teams: the default team's.
    """

    id: str
    name: str
    size: int
    sha256: str
    kind: str
    maps: tuple[str, ...]
    uploaded_at: float
    teams: tuple[str, ...] = ()

    def owned_by(self, team: str) -> bool:
        """Whether `team` uploaded this WAD."""
        return team in (self.teams or (DEFAULT_TEAM,))

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> WadRecord:
        fields = json.loads(data)
        fields["maps"] = tuple(fields["maps"])
        fields["teams"] = tuple(fields.get("teams", ()))
        return cls(**fields)
