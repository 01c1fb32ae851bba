import { describe, expect, it } from "vitest";
import { isWorldChangesField, parseWorldChanges, WORLD_CHANGES_EXAMPLE } from "./timelineInput";

describe("parseWorldChanges", () => {
  it("empty means no timeline (the kwarg is left out)", () => {
    expect(parseWorldChanges("")).toEqual({ ok: true, value: undefined });
    expect(parseWorldChanges("  \n")).toEqual({ ok: true, value: undefined });
  });

  it("a JSON list of entries with at and change is sent as it is", () => {
    const text = '[{"at": 3, "change": "mass", "body": "hand", "scale": 2.0}, {"at": 0, "change": "sensor_offset", "offset": 0.5}]';
    expect(parseWorldChanges(text)).toEqual({
      ok: true,
      value: [{ at: 3, change: "mass", body: "hand", scale: 2 }, { at: 0, change: "sensor_offset", offset: 0.5 }],
    });
    expect(parseWorldChanges("[]")).toEqual({ ok: true, value: [] });
  });

  it("the placeholder, the platform overview's example, is a valid timeline", () => {
    const parsed = parseWorldChanges(WORLD_CHANGES_EXAMPLE);
    expect(parsed.ok && parsed.value?.map((e) => e.at)).toEqual([5000, 5000, 9000]);
  });

  it("says what is wrong: not JSON, not a list, an entry without at or change", () => {
    const error = (text: string) => {
      const parsed = parseWorldChanges(text);
      return parsed.ok ? null : parsed.error;
    };
    expect(error("[{at: 3}]")).toMatch(/^not JSON: /);
    expect(error('{"at": 3, "change": "mass"}')).toMatch(/^world changes must be a JSON list/);
    expect(error("[3]")).toMatch(/^world_changes\[0\] must be an object/);
    expect(error('[{"at": 1, "change": "mass"}, {"change": "mass"}]')).toMatch(/^world_changes\[1\] needs "at"/);
    expect(error('[{"at": -1, "change": "mass"}]')).toBe("world_changes[0].at must be a whole number of steps, 0 or more (got -1)");
    expect(error('[{"at": 2.5, "change": "mass"}]')).toMatch(/got 2\.5/);
    expect(error('[{"at": "5", "change": "mass"}]')).toMatch(/got "5"/);
    expect(error('[{"at": 5}]')).toBe('world_changes[0] needs "change": one of mass, friction, motor_strength, position, sensor_offset, sensor_noise');
  });
});

describe("isWorldChangesField", () => {
  it("kwargs.world_changes and its entries' fields", () => {
    expect(isWorldChangesField("kwargs.world_changes")).toBe(true);
    expect(isWorldChangesField("kwargs.world_changes[0].body")).toBe(true);
    expect(isWorldChangesField("kwargs.world_changesx")).toBe(false);
    expect(isWorldChangesField("kwargs.frameskip")).toBe(false);
    expect(isWorldChangesField(null)).toBe(false);
  });
});
