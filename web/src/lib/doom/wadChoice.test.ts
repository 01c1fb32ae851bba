import { describe, expect, it } from "vitest";
import { MAX_WAD_BYTES, NO_WAD, pickWad, uploadProblem, type Wad, wadKwargs, withWad } from "./wadChoice";

const wad = (id: string, maps: string[], uploaded_at = 1): Wad => ({
  id, name: `${id}.wad`, size: 10, sha256: "0", kind: "PWAD", maps, uploaded_at,
});

describe("the WAD picker's choice", () => {
  it("picks a WAD's first map, and no WAD for an unknown id", () => {
    const wads = [wad("wad-a", ["MAP03", "MAP04"]), wad("wad-b", ["E1M1"])];
    expect(pickWad(wads, "wad-a")).toEqual({ wad: "wad-a", map: "MAP03" });
    expect(pickWad(wads, "wad-b")).toEqual({ wad: "wad-b", map: "E1M1" });
    expect(pickWad(wads, "wad-z")).toEqual(NO_WAD);
    expect(pickWad(wads, null)).toEqual(NO_WAD);
  });

  it("adds wad and doom_map to the kwargs only when a WAD is picked", () => {
    expect(wadKwargs(NO_WAD)).toEqual({});
    expect(wadKwargs({ wad: "wad-a", map: "MAP04" })).toEqual({ wad: "wad-a", doom_map: "MAP04" });
    expect(wadKwargs({ wad: "wad-a", map: null })).toEqual({ wad: "wad-a" });
  });

  it("says why a file cannot be uploaded before sending it", () => {
    expect(uploadProblem({ name: "maze.WAD", size: 1000 })).toBeNull();
    expect(uploadProblem({ name: "maze.zip", size: 1000 })).toBe("maze.zip is not a .wad file");
    expect(uploadProblem({ name: "e.wad", size: 0 })).toBe("e.wad is empty");
    expect(uploadProblem({ name: "big.wad", size: MAX_WAD_BYTES + 1 })).toBe("big.wad is 20.0 MB: uploads are at most 20 MB");
  });

  it("keeps the list oldest first, an upload of the same file once", () => {
    const a = wad("wad-a", ["MAP01"], 1);
    const b = wad("wad-b", ["MAP01"], 2);
    expect(withWad([b], a).map((w) => w.id)).toEqual(["wad-a", "wad-b"]);
    expect(withWad([a, b], a).map((w) => w.id)).toEqual(["wad-a", "wad-b"]);
  });
});
