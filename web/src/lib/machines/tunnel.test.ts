import { describe, expect, it } from "vitest";
import type { Tunnel } from "../../api/machines";
import { endpointOff, reasonRepeatsTunnel, tunnelRefreshMs, tunnelRouteText, tunnelView, whenText } from "./tunnel";

const SINCE = 1_900_000_000; // 2030-03-17 17:46:40 UTC
const tunnel = (state: Tunnel["state"]): Tunnel => ({ state, since: SINCE, summary: `${state} ...` });

describe("a machine behind NAT's tunnel", () => {
  it("is nothing for a machine the platform dials itself", () => {
    expect(tunnelView({ tunnel: null }, SINCE)).toBeNull();
    expect(tunnelView({}, SINCE)).toBeNull();
  });

  it("says waiting, connected since and down since, with how long ago", () => {
    expect(tunnelView({ tunnel: tunnel("waiting") }, SINCE)).toEqual(
      { state: "waiting", label: "Waiting for the machine to connect: run the command on it", tone: "warn" });
    expect(tunnelView({ tunnel: tunnel("connected") }, SINCE + 300)).toEqual(
      { state: "connected", label: "Tunnel connected since 2030-03-17 17:46:40 UTC (5 min ago)", tone: "good" });
    const down = tunnelView({ tunnel: tunnel("down") }, SINCE + 3);
    expect(down?.tone).toBe("bad");
    expect(down?.label).toBe("Tunnel down since 2030-03-17 17:46:40 UTC (just now): is the command still running on the machine?");
    expect(whenText(0)).toBe("1970-01-01 00:00:00 UTC");
  });

  it("keeps the page asking often while a tunnel waits or is down, now and then while all are up, never without one", () => {
    expect(tunnelRefreshMs(null)).toBeNull();
    expect(tunnelRefreshMs([{ tunnel: null }])).toBeNull();
    expect(tunnelRefreshMs([{ tunnel: null }, { tunnel: tunnel("waiting") }])).toBe(3000);
    expect(tunnelRefreshMs([{ tunnel: tunnel("connected") }, { tunnel: tunnel("down") }])).toBe(3000);
    expect(tunnelRefreshMs([{ tunnel: null }, { tunnel: tunnel("connected") }])).toBe(15_000);
  });

  it("shows the platform's reason once: the tunnel line already says waiting or down", () => {
    expect(reasonRepeatsTunnel({ tunnel: tunnel("waiting"), status_reason: "waiting for the machine to connect" })).toBe(true);
    expect(reasonRepeatsTunnel({ tunnel: tunnel("down"), status_reason: "tunnel down since 2030-...: ..." })).toBe(true);
    expect(reasonRepeatsTunnel({ tunnel: tunnel("connected"), status_reason: "Permission denied (publickey)" })).toBe(false);
    expect(reasonRepeatsTunnel({ tunnel: null, status_reason: "" })).toBe(false);
  });

  it("says where the platform reaches it: through the tunnel, not a loopback address to paste", () => {
    expect(tunnelRouteText({ target: { user: "ubuntu", host: "127.0.0.1", port: 40123 } })).toBe(
      "ubuntu through its tunnel (platform port 40123)");
  });

  it("knows the endpoint-off answer (409) from the others", () => {
    expect(endpointOff({ status: 409, detail: "off", code: "conflict" })).toBe(true);
    expect(endpointOff({ status: 422, detail: "name", code: "invalid" })).toBe(false);
    expect(endpointOff(new Error("network"))).toBe(false);
    expect(endpointOff(null)).toBe(false);
  });
});
