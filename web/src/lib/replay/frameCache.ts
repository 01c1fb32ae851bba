// A least-recently-used cache of frames as object URLs: evicting one revokes its URL, except
// the frame on screen, which stays until another replaces it.

export class FrameCache {
  private readonly urls = new Map<number, string>();
  private shown: number | null = null;

  constructor(
    readonly capacity: number,
    private readonly revoke: (url: string) => void,
  ) {}

  get size(): number {
    return this.urls.size;
  }

  has(row: number): boolean {
    return this.urls.has(row);
  }

  /** The row's URL, marked as the most recently used. */
  get(row: number): string | undefined {
    const url = this.urls.get(row);
    if (url !== undefined) {
      this.urls.delete(row);
      this.urls.set(row, url);
    }
    return url;
  }

  put(row: number, url: string): void {
    const old = this.urls.get(row);
    if (old !== undefined && old !== url) this.revoke(old);
    this.urls.delete(row);
    this.urls.set(row, url);
    this.evict();
  }

  /** Keep this row's URL alive (it is on screen). */
  markShown(row: number | null): void {
    this.shown = row;
    this.evict();
  }

  rows(): number[] {
    return [...this.urls.keys()];
  }

  clear(): void {
    for (const url of this.urls.values()) this.revoke(url);
    this.urls.clear();
    this.shown = null;
  }

  private evict(): void {
    for (const row of this.urls.keys()) {
      if (this.urls.size <= this.capacity) return;
      if (row === this.shown) continue;
      this.revoke(this.urls.get(row)!);
      this.urls.delete(row);
    }
  }
}
