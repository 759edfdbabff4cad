// A pool's concurrency bound: at most `concurrency` tasks run at once; the rest wait, first in, first
// out. DESIGN.md names p-limit for this, and pools used it until the thirteenth bench pass. Per task
// p-limit makes ~5 promises, a bound closure and a queue node, and starts the task a microtask later:
// 1.8–2.4 µs a task against 0.2–0.3 µs here, in batches of 4,000 no-op tasks on this VM. In a drain of
// no-op triggers, whose whole Node cost is ~20 µs each, Node's CPU per trigger came out 13 % lower
// (median of 8 alternating pairs, docs/bench.md). A task starts at once when a slot is free, inside
// run(); it must return a promise and not throw synchronously (an async function never does). Its
// promise settling, either way, frees the slot.
export class Limit {
  private active = 0;
  private queue: Array<(() => Promise<unknown>) | undefined> = [];
  private head = 0;
  private readonly done = () => {
    this.active--;
    this.drain();
  };

  constructor(private concurrency: number) {}

  get activeCount(): number {
    return this.active;
  }

  get pendingCount(): number {
    return this.queue.length - this.head;
  }

  setConcurrency(concurrency: number): void {
    this.concurrency = concurrency;
    this.drain();
  }

  run(task: () => Promise<unknown>): void {
    this.queue.push(task);
    this.drain();
  }

  private drain(): void {
    while (this.active < this.concurrency && this.head < this.queue.length) {
      const task = this.queue[this.head]!;
      this.queue[this.head++] = undefined;
      this.active++;
      task().then(this.done, this.done);
    }
    // Started tasks leave the front of the array: drop them once they are half of it.
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
