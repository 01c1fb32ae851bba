// Sizes and times of a machine's facts in words: GPU memory (nvidia-smi's MiB), memory and disk
// (bytes), and when it was last checked.

const MIB_PER_GIB = 1024;
const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"] as const;

function trimmed(value: number, digits: number): string {
  return value.toFixed(digits).replace(/\.0+$/, "");
}

/** nvidia-smi's MiB in words: "79.6 GiB", "512 MiB"; null ("N/A", "[Not Supported]") is unknown. */
export function gpuMemory(mib: number | null | undefined): string {
  if (mib === null || mib === undefined || !Number.isFinite(mib) || mib < 0) return "memory unknown";
  if (mib < MIB_PER_GIB) return `${Math.round(mib)} MiB`;
  return `${trimmed(mib / MIB_PER_GIB, 1)} GiB`;
}

/** Bytes in binary units ("15.6 GiB"); 0 or less is unknown ("–": the check never read it). */
export function bytes(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value) || value <= 0) return "–";
  let unit = 0;
  let amount = value;
  while (amount >= 1024 && unit < UNITS.length - 1) {
    amount /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? Math.round(amount) : trimmed(amount, 1)} ${UNITS[unit]}`;
}

/** "12.3 GiB free of 15.6 GiB", or what is known of it. */
export function freeOf(free: number, total: number): string {
  if (total <= 0) return "–";
  return `${bytes(free)} free of ${bytes(total)}`;
}

/** How long ago a Unix time (seconds) was, from `now` (seconds): "just now", "5 min ago",
 * "3 h ago", "2 days ago"; 0 is "never". */
export function ago(then: number, now: number): string {
  if (!then) return "never";
  const seconds = Math.max(0, Math.round(now - then));
  if (seconds < 10) return "just now";
  if (seconds < 60) return `${seconds} s ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} days ago`;
}
