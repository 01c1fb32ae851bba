import { describe, expect, it } from "vitest";
import { envChoices, sizeText } from "./savedSnapshots";

describe("a saved snapshot's size", () => {
  it("reads in the largest unit below 1024 of it", () => {
    expect(sizeText(0)).toBe("0 B");
    expect(sizeText(1023)).toBe("1023 B");
    expect(sizeText(1536)).toBe("1.5 KiB");
    expect(sizeText(5 * 1024 * 1024)).toBe("5.0 MiB");
    expect(sizeText(300 * 1024 * 1024)).toBe("300 MiB");
    expect(sizeText(3 * 1024 ** 4)).toBe("3072 GiB");
  });
});

describe("the environment filter's choices", () => {
  it("are the listed environments once each, sorted, with the picked one kept", () => {
    expect(envChoices([{ env_id: "pong" }, { env_id: "cartpole" }, { env_id: "pong" }], "")).toEqual(["cartpole", "pong"]);
    expect(envChoices([], "cartpole")).toEqual(["cartpole"]);
  });
});
