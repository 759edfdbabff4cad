// One Fairway per data directory: two servers starting the same embedded cluster would fight over it.
// The lock is a file holding the owner's pid and start time, created exclusively. A lock whose owner is
// gone (kill -9, power loss) is stale and taken over; a live owner makes the start fail with one line.
import { openSync, readFileSync, rmSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";
import { isAlive, startTimeOf } from "./process-check.ts";
import { StartupError } from "./startup-error.ts";

export interface DataDirLock {
  release(): void;
}

export function lockDataDir(dataDir: string): DataDirLock {
  const file = join(dataDir, "fairway.pid");
  const mine = `${process.pid} ${startTimeOf(process.pid) ?? "-"}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, "wx", 0o644);
      writeSync(fd, mine);
      closeSync(fd);
      return {
        release() {
          // Only our own lock: a release after a takeover must not remove the new owner's.
          if (readOr(file, "") === mine) rmSync(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const [pidText, started] = readOr(file, "").trim().split(" ");
    const pid = Number(pidText);
    const sameProcess = isAlive(pid) && (started === "-" || started === undefined || startTimeOf(pid) === started);
    if (sameProcess && pid !== process.pid) {
      throw new StartupError(
        `data directory ${dataDir} is in use by another running Fairway (pid ${pid}); stop it, or set FAIRWAY_DATA_DIR to another directory, or join it with DATABASE_URL from ${join(dataDir, "database-url")}`,
      );
    }
    rmSync(file, { force: true }); // stale: its owner is gone
  }
  throw new StartupError(
    `could not lock data directory ${dataDir} (${file} keeps reappearing); is another Fairway starting there?`,
  );
}

function readOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return fallback;
  }
}
