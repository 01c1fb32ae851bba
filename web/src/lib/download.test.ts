import { describe, expect, it } from "vitest";
import { filenameFromDisposition } from "./download";

describe("the name of a download", () => {
  it("comes from Content-Disposition, the extended form first", () => {
    expect(filenameFromDisposition('attachment; filename="usage-2026-12-01-2026-12-31.csv"', "x.csv"))
      .toBe("usage-2026-12-01-2026-12-31.csv");
    expect(filenameFromDisposition("attachment; filename=s-1.tar", "x")).toBe("s-1.tar");
    expect(filenameFromDisposition("attachment; filename=\"plain.csv\"; filename*=UTF-8''caf%C3%A9.csv", "x")).toBe("café.csv");
    expect(filenameFromDisposition('attachment; filename="quoted \\"name\\".csv"', "x")).toBe('quoted "name".csv');
  });

  it("never holds a folder, and falls back when there is no name", () => {
    expect(filenameFromDisposition('attachment; filename="../../etc/passwd"', "x")).toBe("passwd");
    expect(filenameFromDisposition('attachment; filename="a\\\\b.csv"', "x")).toBe("b.csv");
    expect(filenameFromDisposition("attachment", "fallback.csv")).toBe("fallback.csv");
    expect(filenameFromDisposition(null, "fallback.csv")).toBe("fallback.csv");
    expect(filenameFromDisposition('attachment; filename=".."', "fallback.csv")).toBe("fallback.csv");
  });
});
