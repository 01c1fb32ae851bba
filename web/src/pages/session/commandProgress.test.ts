import { describe, expect, it } from "vitest";
import { progressText, SHOW_AFTER_MS } from "./commandProgress";

describe("progressText", () => {
  it("says nothing without a command in flight or while it is recent", () => {
    expect(progressText(null, 5000)).toBeNull();
    expect(progressText({ command: "step", since: 1000 }, 1000 + SHOW_AFTER_MS - 1)).toBeNull();
  });

  it("names the command and its seconds so far, to a tenth", () => {
    expect(progressText({ command: "step", since: 1000 }, 4240)).toBe("stepping… 3.2 s");
    expect(progressText({ command: "reset", since: 0 }, 1000)).toBe("resetting… 1.0 s");
    expect(progressText({ command: "restore", since: 0 }, 12_345)).toBe("restoring… 12.3 s");
    expect(progressText({ command: "close", since: 0 }, 1500)).toBe("closing… 1.5 s");
  });
});
