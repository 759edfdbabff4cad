import { expect, it } from "vitest";
import { isNetworkError } from "../src/process-guards.ts";

it("treats only network error codes as survivable stray rejections", () => {
  for (const code of ["ECONNRESET", "EPIPE", "CONNECTION_CLOSED", "CONNECT_TIMEOUT"]) {
    expect(isNetworkError(Object.assign(new Error("x"), { code }))).toBe(true);
  }
  expect(isNetworkError(new TypeError("Cannot read properties of null"))).toBe(false);
  expect(isNetworkError(Object.assign(new Error("x"), { code: "23505" }))).toBe(false); // a Postgres error
  expect(isNetworkError(null)).toBe(false);
  expect(isNetworkError("ECONNRESET")).toBe(false);
});
