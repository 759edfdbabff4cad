// A pool's concurrency bound: at most `concurrency` tasks run at once; the rest wait, lowest key first,
// first in first out among equal keys. The pool keys a claimed trigger by its WFQ slot (pool.ts). A small
// binary heap rather than a general-purpose limiter: a task costs one heap node and starts inside run()
// when a slot is free (docs/decisions/0021-own-limit.md). A task must return a promise and not throw
// synchronously (an async function never does); its promise settling, either way, frees the slot.
type Task = () => Promise<unknown>;

interface Waiting {
  key: number;
  seq: number;
  task: Task;
}

export class Limit {
  private active = 0;
  /** The waiting tasks, a binary min-heap by (key, seq). */
  private heap: Waiting[] = [];
  private seq = 0;
  private lastKey: number | null = null;
  private readonly done = () => {
    this.active--;
    this.drain();
  };

  constructor(private concurrency: number) {}

  get activeCount(): number {
    return this.active;
  }

  get pendingCount(): number {
    return this.heap.length;
  }

  /** The key of the task started last; null before the first. */
  get lastStartedKey(): number | null {
    return this.lastKey;
  }

  setConcurrency(concurrency: number): void {
    this.concurrency = concurrency;
    this.drain();
  }

  /** Run `task` once a slot is free and no waiting task has a lower key, or the same key and came first.
   *  A key that is not a number (NaN) waits behind every other. */
  run(task: Task, key = 0): void {
    this.push({ key: Number.isNaN(key) ? Infinity : key, seq: this.seq++, task });
    this.drain();
  }

  private drain(): void {
    while (this.active < this.concurrency && this.heap.length > 0) {
      const { task, key } = this.pop();
      this.active++;
      this.lastKey = key;
      task().then(this.done, this.done);
    }
  }

  private push(w: Waiting): void {
    const h = this.heap;
    let i = h.length;
    h.push(w);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(w, h[parent])) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = w;
  }

  private pop(): Waiting {
    const h = this.heap;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= h.length) break;
        const c = l + 1 < h.length && before(h[l + 1], h[l]) ? l + 1 : l;
        if (!before(h[c], last)) break;
        h[i] = h[c];
        i = c;
      }
      h[i] = last;
    }
    return top;
  }
}

function before(a: Waiting, b: Waiting): boolean {
  return a.key < b.key || (a.key === b.key && a.seq < b.seq);
}
