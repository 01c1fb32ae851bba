// At most `limit` tasks at a time, the rest waiting in order; a task whose signal aborts while
// it waits never starts. The Environments page loads previews through one, so that previews
// being made (each a short session) never take all of the browser's connections to the gateway.

export class TaskQueue {
  private running = 0;
  private waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  /** Runs `task` when a place is free; rejects with the signal's reason if aborted first. */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        if (signal?.aborted) {
          this.next();
          reject(signal.reason);
          return;
        }
        this.running++;
        task().then(resolve, reject).finally(() => {
          this.running--;
          this.next();
        });
      };
      if (this.running < this.limit) start();
      else this.waiting.push(start);
    });
  }

  get size(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  private next(): void {
    while (this.running < this.limit && this.waiting.length > 0) this.waiting.shift()!();
  }
}
