/** Events a test's client receives, in order, and a way to wait for the next ones. */
export class Received<T> {
  readonly items: T[] = [];
  private waiters: (() => void)[] = [];

  push = (item: T) => {
    this.items.push(item);
    for (const w of this.waiters.splice(0)) w();
  };

  /** Resolves once `count` items in all have arrived (fails after `timeoutMs`). */
  async atLeast(count: number, timeoutMs = 10_000): Promise<T[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.items.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`waited for ${count} events, got ${this.items.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.items.slice(0, count);
  }
}
