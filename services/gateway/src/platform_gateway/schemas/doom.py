"""Uploaded Doom WADs."""

from __future__ import annotations

from pydantic import BaseModel, Field
from platform_wads import WadRecord


class WadPublic(BaseModel):
    """A WAD uploaded to the platform; sessions of any Doom environment play its maps with
    `kwargs={"wad": id, "doom_map": map}` (on top of Freedoom)."""

    id: str = Field(description="the WAD's id: `wad-` and 16 hex digits of its SHA-256 (the same file is one WAD)",
                    examples=["wad-3f2a9c0d1e4b5a67"])
    name: str = Field(description="the file name it was first uploaded as", examples=["memory_test.wad"])
    size: int = Field(description="bytes")
    sha256: str = Field(description="its SHA-256, hex")
    kind: str = Field(description='"PWAD" (maps on top of a game) or "IWAD" (a whole game)')
    maps: list[str] = Field(description="its maps, in file order: the values `doom_map` takes", examples=[["MAP01"]])
    uploaded_at: float = Field(description="Unix seconds of its first upload")

    @classmethod
    def of(cls, record: WadRecord) -> WadPublic:
        return cls(id=record.id, name=record.name, size=record.size, sha256=record.sha256, kind=record.kind,
                   maps=list(record.maps), uploaded_at=record.uploaded_at)


class WadListPublic(BaseModel):
    wads: list[WadPublic] = Field(description="every uploaded WAD, oldest first")
