// Fetches frames by row with a few requests at a time, into a FrameCache. `want(rows)` replaces
// what is queued (nearest first, as prefetchRows orders them); requests for rows no longer
// wanted are aborted. Every loaded row is announced to `onLoaded`.
import { FrameCache } from "./frameCache";

export type FetchFrame = (row: number, signal: AbortSignal) => Promise<Blob>;

export interface FrameLoaderOptions {
  fetchFrame: FetchFrame;
  createUrl: (blob: Blob) => string;
  revokeUrl: (url: string) => void;
  capacity?: number;
  concurrency?: number;
  onLoaded?: (row: number) => void;
  onError?: (row: number, error: unknown) => void;
}

export class FrameLoader {
  readonly cache: FrameCache;
  private queue: number[] = [];
  private readonly inFlight = new Map<number, AbortController>();
  private readonly failed = new Set<number>();
  private readonly concurrency: number;
  private disposed = false;

  constructor(private readonly options: FrameLoaderOptions) {
    this.cache = new FrameCache(options.capacity ?? 300, options.revokeUrl);
    this.concurrency = options.concurrency ?? 4;
  }

  /** The row's object URL when loaded. */
  url(row: number): string | undefined {
    return this.cache.get(row);
  }

  /** Fetch these rows (first ones first); drop queued and in-flight rows not among them. */
  want(rows: readonly number[]): void {
    if (this.disposed) return;
    const wanted = new Set(rows);
    for (const [row, controller] of this.inFlight) {
      if (!wanted.has(row)) {
        controller.abort();
        this.inFlight.delete(row);
      }
    }
    this.queue = rows.filter((row) => !this.cache.has(row) && !this.inFlight.has(row) && !this.failed.has(row));
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

  private pump(): void {
    while (!this.disposed && this.inFlight.size < this.concurrency && this.queue.length > 0) {
      const row = this.queue.shift()!;
      if (this.cache.has(row) || this.inFlight.has(row)) continue;
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
}
