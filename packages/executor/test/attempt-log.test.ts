import { describe, expect, it } from "vitest";
import { AttemptLog } from "../src/trace.ts";

describe("AttemptLog", () => {
  it("joins arguments by spaces, objects as JSON, errors as their stack", () => {
    const log = new AttemptLog();
    log.add(["n", 1, { a: [1, 2] }, null]);
    const err = new Error("boom");
    log.add([err]);
    expect(log.lines).toEqual(['n 1 {"a":[1,2]} null', err.stack]);
    expect(log.truncated).toBe(false);
  });

  it("keeps at most its bound of UTF-8 bytes, cutting inside a line without half a character", () => {
    const log = new AttemptLog(20);
    log.add(["0123456789"]); // 11 bytes with its newline
    log.add(["ééééé"]); // 10 bytes: only 8 fit, so four characters
    log.add(["more"]);
    expect(log.lines).toEqual(["0123456789", "éééé"]);
    expect(log.truncated).toBe(true);
  });
});
