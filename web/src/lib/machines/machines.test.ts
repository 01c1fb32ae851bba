import { describe, expect, it } from "vitest";
import type { Machine } from "../../api/machines";
import { hopText, routeText } from "./address";
import { gpuRows, gpuSummary } from "./gpus";
import { FINGERPRINT_COMMAND, fingerprintText, hostKeyChanges } from "./hostKeys";
import { appendKeyCommand, shellQuote, sshCommandHint } from "./sshHints";
import { progressText, statusView } from "./status";
import { ago, bytes, freeOf, gpuMemory } from "./units";

const H100 = "NVIDIA H100 80GB HBM3";
const machine: Machine = {
  id: "m-1", name: "h100-box", team: "default", created_at: 1_800_000_000, checked_at: 1_800_000_000,
  facts_at: 1_800_000_000, status: "ready", status_reason: "",
  target: { user: "root", host: "203.0.113.7", port: 22045 }, jumps: [],
  host_key_fingerprints: { "203.0.113.7:22045": "SHA256:old" }, pending_host_key_fingerprints: {},
  facts: {
    cpus: 32, memory_total_bytes: 270_000_000_000, memory_available_bytes: 250_000_000_000,
    disk_total_bytes: 2_000_000_000_000, disk_free_bytes: 1_500_000_000_000, python: "Python 3.11.2",
    git: "git version 2.39.2", os: "Linux 6.1.0 x86_64", gpu_error: "",
    gpus: [
      { index: 1, name: H100, memory_total_mib: null, uuid: "GPU-b", driver_version: "550.54.15" },
      { index: 0, name: H100, memory_total_mib: 81559, uuid: "GPU-a", driver_version: "550.54.15" },
    ],
    gpu_processes: [
      { gpu_uuid: "GPU-a", pid: 4242, used_memory_mib: 1024 },
      { gpu_uuid: "GPU-a", pid: 4243, used_memory_mib: 2560 },
    ],
  },
};

describe("sizes and times", () => {
  it("gives nvidia-smi's MiB in GiB, small ones in MiB, N/A as unknown", () => {
    expect(gpuMemory(81559)).toBe("79.6 GiB");
    expect(gpuMemory(1024)).toBe("1 GiB");
    expect(gpuMemory(512)).toBe("512 MiB");
    expect(gpuMemory(null)).toBe("memory unknown");
    expect(gpuMemory(undefined)).toBe("memory unknown");
  });

  it("gives bytes in binary units, 0 as not known", () => {
    expect(bytes(16 * 1024 ** 3)).toBe("16 GiB");
    expect(bytes(1_500_000_000_000)).toBe("1.4 TiB");
    expect(bytes(900)).toBe("900 B");
    expect(bytes(0)).toBe("–");
    expect(freeOf(8 * 1024 ** 3, 16 * 1024 ** 3)).toBe("8 GiB free of 16 GiB");
    expect(freeOf(0, 0)).toBe("–");
  });

  it("says how long ago a check was", () => {
    expect(ago(0, 1000)).toBe("never");
    expect(ago(1000, 1005)).toBe("just now");
    expect(ago(1000, 1030)).toBe("30 s ago");
    expect(ago(1000, 1000 + 5 * 60)).toBe("5 min ago");
    expect(ago(1000, 1000 + 3 * 3600)).toBe("3 h ago");
    expect(ago(1000, 1000 + 3 * 86400)).toBe("3 days ago");
    expect(ago(1000, 900)).toBe("just now"); // a clock a little behind the server's
  });
});

describe("where the platform logs in", () => {
  it("writes a hop as user@host:port, IPv6 in brackets", () => {
    expect(hopText(machine.target)).toBe("root@203.0.113.7:22045");
    expect(hopText({ user: "ubuntu", host: "2001:db8::1", port: 22 })).toBe("ubuntu@[2001:db8::1]:22");
  });

  it("names the bastions on the way, in order", () => {
    expect(routeText(machine)).toEqual({ target: "root@203.0.113.7:22045", via: null });
    const jumps = [{ user: "ops", host: "bastion", port: 2200 }, { user: "root", host: "10.0.0.1", port: 22 }];
    expect(routeText({ ...machine, jumps }).via).toBe("ops@bastion:2200, root@10.0.0.1:22");
  });
});

describe("status", () => {
  it("gives each status its words, tone and reason", () => {
    expect(statusView(machine)).toEqual({ label: "Ready", tone: "good", reason: null });
    expect(statusView({ status: "ready", status_reason: "stale" }).reason).toBeNull();
    expect(statusView({ status: "unreachable", status_reason: "connection refused" }))
      .toEqual({ label: "Unreachable", tone: "bad", reason: "connection refused" });
    expect(statusView({ status: "host key changed", status_reason: "accept it" }).tone).toBe("warn");
    expect(statusView({ status: "unchecked", status_reason: "" })).toEqual({ label: "Not checked yet", tone: "muted", reason: null });
  });

  it("says what the platform is doing while it connects, with the seconds", () => {
    expect(progressText("add", 0)).toBe("Connecting to the machine and checking it…");
    expect(progressText("add", 3.7)).toBe("Connecting to the machine and checking it… 3 s");
    expect(progressText("accept", 1)).toContain("new host key");
  });
});

describe("GPUs", () => {
  it("lists them by index with their memory and the processes on each", () => {
    const rows = gpuRows(machine.facts);
    expect(rows.map((r) => r.gpu.index)).toEqual([0, 1]);
    expect(rows[0].memory).toBe("79.6 GiB");
    expect(rows[0].processes.map((p) => p.pid)).toEqual([4242, 4243]);
    expect(rows[0].use).toBe("2 processes (3.5 GiB)");
    expect(rows[1]).toMatchObject({ memory: "memory unknown", processes: [], use: "free" });
  });

  it("counts a process whose memory is unknown without a size", () => {
    const facts = { gpus: [machine.facts.gpus![0]], gpu_processes: [{ gpu_uuid: "GPU-b", pid: 7, used_memory_mib: null }] };
    expect(gpuRows(facts)[0].use).toBe("1 process");
  });

  it("sums up the GPUs, and a machine without any is a CPU machine", () => {
    expect(gpuSummary(machine.facts)).toBe(`2 × ${H100}`);
    expect(gpuSummary({ gpus: [] })).toBe("no GPU (a CPU machine)");
  });
});

describe("a changed host key", () => {
  it("lists each hop's pinned and presented fingerprints", () => {
    const changed = { ...machine, pending_host_key_fingerprints: { "203.0.113.7:22045": "SHA256:new", "bastion:22": "" } };
    expect(hostKeyChanges(changed)).toEqual([
      { hop: "203.0.113.7:22045", pinned: "SHA256:old", presented: "SHA256:new" },
      { hop: "bastion:22", pinned: null, presented: null },
    ]);
    expect(hostKeyChanges(machine)).toEqual([]);
    expect(fingerprintText(null, "could not be read")).toBe("could not be read");
    expect(fingerprintText("SHA256:x", "?")).toBe("SHA256:x");
    expect(FINGERPRINT_COMMAND).toContain("ssh-keygen -lf");
  });
});

describe("the pasted command's hints", () => {
  it("says nothing about an ssh command or an empty field", () => {
    expect(sshCommandHint("")).toBeNull();
    expect(sshCommandHint("ssh root@203.0.113.7 -p 22045")).toBeNull();
    expect(sshCommandHint("$ ssh -p 41234 root@host -L 8080:localhost:8080")).toBeNull();
    expect(sshCommandHint("ssh://user@host:2222")).toBeNull();
  });

  it("refuses to send a private key", () => {
    const hint = sshCommandHint("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn...\n-----END OPENSSH PRIVATE KEY-----");
    expect(hint?.blocks).toBe(true);
    expect(hint?.text).toMatch(/never paste it/);
  });

  it("says early what the gateway will say about what it cannot use", () => {
    expect(sshCommandHint("gcloud compute ssh my-vm --zone us-central1-a")?.text).toContain("--dry-run");
    expect(sshCommandHint("ssh abc-64410ab1@ssh.runpod.io -i ~/.ssh/id_ed25519")?.text).toContain("SSH over exposed TCP");
    expect(sshCommandHint("scp model.pt root@203.0.113.7:")?.blocks).toBe(false);
    expect(sshCommandHint("ssh-ed25519 AAAAC3Nza me@laptop")?.text).toContain("public key");
    expect(sshCommandHint("root@203.0.113.7")?.text).toContain("starting with ssh");
  });
});

describe("the platform's key on a machine", () => {
  it("quotes the line for the shell, even with a quote in its comment", () => {
    expect(shellQuote("a b")).toBe("'a b'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
  });

  it("appends the authorized_keys line for the user it logs in as", () => {
    const line = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample simulusion-platform";
    expect(appendKeyCommand(`${line}\n`)).toBe(
      `mkdir -p ~/.ssh && chmod 700 ~/.ssh && echo '${line}' >> ~/.ssh/authorized_keys && chmod 600 ~/.ssh/authorized_keys`);
  });
});
