// Follows an experiment's log over its WebSocket (`/v0/experiments/{id}/logs/stream?offset=N`):
// each message is one piece of the log from the byte the follower holds (`next_offset` of the
// last); after the one with `ended` the server closes and the follower stops. A connection that
// drops before that (a restarted gateway, a network blip, the machines service failing: 1011)
// is opened again at the last `next_offset`, after 1 s, then 2, 4, up to 10 s while it keeps
// failing, so nothing is lost or repeated. 4401 (the token refused) and 4404 (no such
// experiment, or another team's) are final. The page decides what to show (`onState`).
import type { ExperimentLogPage } from "../../api/experiments";

export type FollowState =
  /** `again`: not the first connection; `attempt`: connections tried since the last piece */
  | { phase: "connecting"; again: boolean; attempt: number }
  | { phase: "following" }
  | { phase: "reconnecting"; inMs: number; offset: number }
  | { phase: "ended" }
  | { phase: "failed"; code: number; reason: string };

export interface FollowerOptions {
  /** The stream's URL from a byte offset (api/experiments.ts logStreamUrl). */
  url: (offset: number) => string;
  /** The byte to start at (0: the whole log). */
  offset?: number;
  onPage: (page: ExperimentLogPage) => void;
  onState: (state: FollowState) => void;
  /** Makes the socket (default `new WebSocket(url)`); tests pass a stand-in. */
  connect?: (url: string) => WebSocket;
  retryMs?: { first: number; most: number };
}

export const RETRY_MS = { first: 1000, most: 10_000 } as const;
const FINAL_CODES: Record<number, string> = {
  4401: "the platform refused the sign-in: sign in again",
  4404: "no such experiment",
};

export class LogFollower {
  /** The byte the next piece starts at: the last `next_offset` received. */
  offset: number;
  private socket: WebSocket | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private attempts = 0;
  private opens = 0;
  private done = false;
  private readonly options: FollowerOptions;
  private readonly retry: { first: number; most: number };

  constructor(options: FollowerOptions) {
    this.options = options;
    this.offset = options.offset ?? 0;
    this.retry = options.retryMs ?? RETRY_MS;
  }

  start(): void {
    this.open();
  }

  /** Stops following (the page went away); no further callbacks. */
  stop(): void {
    this.done = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.socket?.close(1000);
    this.socket = null;
  }

  private open(): void {
    this.timer = null;
    this.attempts += 1;
    this.opens += 1;
    this.options.onState({ phase: "connecting", again: this.opens > 1, attempt: this.attempts });
    const url = this.options.url(this.offset);
    const socket = this.options.connect ? this.options.connect(url) : new WebSocket(url);
    this.socket = socket;
    socket.addEventListener("open", () => {
      if (this.socket === socket && !this.done) this.options.onState({ phase: "following" });
    });
    socket.addEventListener("message", (event: MessageEvent) => {
      if (this.socket === socket && !this.done) this.receive(socket, event.data);
    });
    socket.addEventListener("close", (event: CloseEvent) => {
      if (this.socket === socket && !this.done) this.closed(event.code, event.reason);
    });
  }

  private receive(socket: WebSocket, data: unknown): void {
    if (typeof data !== "string") return;
    let page: ExperimentLogPage;
    try {
      page = JSON.parse(data) as ExperimentLogPage;
    } catch {
      return;
    }
    if (page.offset !== this.offset) {
      // Not from the byte held (never sent so by the gateway): start again there rather than
      // show a piece twice or leave a hole.
      socket.close(1000);
      this.closed(1006, "a piece from another offset");
      return;
    }
    this.attempts = 0;
    this.offset = page.next_offset;
    this.options.onPage(page);
    if (page.ended) {
      this.done = true;
      this.socket = null;
      socket.close(1000);
      this.options.onState({ phase: "ended" });
    }
  }

  private closed(code: number, reason: string): void {
    this.socket = null;
    const final = FINAL_CODES[code];
    if (final !== undefined) {
      this.done = true;
      this.options.onState({ phase: "failed", code, reason: reason || final });
      return;
    }
    const inMs = Math.min(this.retry.first * 2 ** Math.max(0, this.attempts - 1), this.retry.most);
    this.options.onState({ phase: "reconnecting", inMs, offset: this.offset });
    this.timer = setTimeout(() => this.open(), inMs);
  }
}

/** What the page says about the stream. */
export function followText(state: FollowState): string {
  switch (state.phase) {
    case "connecting":
      if (!state.again) return "Opening the log…";
      return state.attempt > 1 ? `Opening the log again (try ${state.attempt})…` : "Opening the log again…";
    case "following":
      return "Following the log live";
    case "reconnecting":
      return `The connection dropped: opening it again at byte ${state.offset} in ${Math.ceil(state.inMs / 1000)} s`;
    case "ended":
      return "The whole log";
    default:
      return `The log cannot be followed: ${state.reason}`;
  }
}
