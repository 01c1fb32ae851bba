// Fetches frames by row into a FrameCache. `want(rows)` replaces what is wanted: rows[0] is
// the frame to show, fetched at once; the others (nearest first, as prefetchRows orders them)
// are prefetched a few at a time, only once the frame to show is there, so a prefetch never
// delays it. Requests for rows no longer wanted are aborted. Every loaded row is announced to
// `onLoaded`; a row that failed is not asked for again.
import { FrameCache } from "./frameCache";

export type FetchFrame = (row: number, signal: AbortSignal) => Promise<Blob>;

export interface FrameLoaderOptions {
  fetchFrame: FetchFrame;
  createUrl: (blob: Blob) => string;
  revokeUrl: (url: string) => void;
  capacity?: number;
  /** Prefetch requests at once (the frame to show is asked for besides them). */
  concurrency?: number;
  onLoaded?: (row: number) => void;
  onError?: (row: number, error: unknown) => void;
}

export class FrameLoader {
  readonly cache: FrameCache;
  private target: number | null = null;
  private queue: number[] = [];
  private readonly inFlight = new Map<number, AbortController>();
  private readonly failed = new Set<number>();
  private readonly concurrency: number;
  private disposed = false;

  constructor(private readonly options: FrameLoaderOptions) {
    this.cache = new FrameCache(options.capacity ?? 300, options.revokeUrl);
    this.concurrency = options.concurrency ?? 2;
  }

  /** The row's object URL when loaded. */
  url(row: number): string | undefined {
    return this.cache.get(row);
  }

  /** Show rows[0] (fetch it now), prefetch the rest; drop what is not among them. */
  want(rows: readonly number[]): void {
    if (this.disposed) return;
    const wanted = new Set(rows);
    for (const [row, controller] of this.inFlight) {
      if (!wanted.has(row)) {
        controller.abort();
        this.inFlight.delete(row);
      }
    }
    const missing = (row: number) => !this.cache.has(row) && !this.inFlight.has(row) && !this.failed.has(row);
    this.target = rows.length > 0 ? rows[0] : null;
    if (this.target !== null && missing(this.target)) this.start(this.target);
    this.queue = rows.slice(1).filter(missing);
    this.pump();
  }

  pending(): number {
    return this.queue.length + this.inFlight.size;
  }

  dispose(): void {
    this.disposed = true;
    for (const controller of this.inFlight.values()) controller.abort();
    this.inFlight.clear();
    this.queue = [];
    this.cache.clear();
  }

  /** Whether the frame to show is still on its way (prefetches wait for it). */
  private targetPending(): boolean {
    return this.target !== null && this.inFlight.has(this.target);
  }

  private pump(): void {
    while (!this.disposed && !this.targetPending() && this.inFlight.size < this.concurrency && this.queue.length > 0) {
      const row = this.queue.shift()!;
      if (this.cache.has(row) || this.inFlight.has(row) || this.failed.has(row)) continue;
      this.start(row);
    }
  }

  private start(row: number): void {
    const controller = new AbortController();
    this.inFlight.set(row, controller);
    this.options
      .fetchFrame(row, controller.signal)
      .then((blob) => {
        if (this.disposed || controller.signal.aborted) return;
        this.cache.put(row, this.options.createUrl(blob));
        this.options.onLoaded?.(row);
      })
      .catch((error: unknown) => {
        if (controller.signal.aborted || this.disposed) return;
        this.failed.add(row);
        this.options.onError?.(row, error);
      })
      .finally(() => {
        if (this.inFlight.get(row) === controller) this.inFlight.delete(row);
        this.pump();
      });
  }
}
