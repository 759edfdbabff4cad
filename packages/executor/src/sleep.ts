// An interruptible sleep: the loop never spins and never oversleeps a wake-up.
export class Waker {
  private resolve: (() => void) | null = null;
  private woken = false;

  /** Sleep up to ms, or until wake() — including a wake() that arrived while not sleeping. */
  sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.resolve = null;
        self.woken = false;
        resolve();
      }
      this.resolve = done;
    });
  }

  wake(): void {
    if (this.resolve) this.resolve();
    else this.woken = true;
  }
}
