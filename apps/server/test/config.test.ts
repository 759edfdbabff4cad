import { expect, it } from "vitest";
import { loadConfig, portalBrandOf } from "../src/config.ts";

it("keys Redis under fairway: unless FAIRWAY_REDIS_PREFIX says otherwise", () => {
  expect(loadConfig({}).FAIRWAY_REDIS_PREFIX).toBe("fairway:");
  expect(loadConfig({ FAIRWAY_REDIS_PREFIX: "" }).FAIRWAY_REDIS_PREFIX).toBe("fairway:"); // unset, as every empty variable
  expect(loadConfig({ FAIRWAY_REDIS_PREFIX: "staging:fw:" }).FAIRWAY_REDIS_PREFIX).toBe("staging:fw:");
});

it("refuses a prefix over 100 characters, naming the variable", () => {
  expect(() => loadConfig({ FAIRWAY_REDIS_PREFIX: "x".repeat(101) })).toThrow(/FAIRWAY_REDIS_PREFIX/);
});

it("refuses half an Upstash configuration instead of falling back to another coordinator", () => {
  expect(() => loadConfig({ UPSTASH_REDIS_REST_URL: "https://x.upstash.io" })).toThrow(
    /both UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN/,
  );
  expect(() => loadConfig({ UPSTASH_REDIS_REST_TOKEN: "t" })).toThrow(/UPSTASH_REDIS_REST_TOKEN: set both/);
  expect(
    loadConfig({ UPSTASH_REDIS_REST_URL: "https://x.upstash.io", UPSTASH_REDIS_REST_TOKEN: "t" })
      .UPSTASH_REDIS_REST_TOKEN,
  ).toBe("t");
});

it("reports every problem on one line, echoing values but never a URL or token", () => {
  let message = "";
  try {
    loadConfig({ PORT: "eighty", FAIRWAY_ROLE: "scheduler", FAIRWAY_ADMIN_TOKEN: "short-secret" });
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message.split("\n")).toHaveLength(1);
  expect(message).toMatch(/^invalid configuration: .*PORT: .*\(got "eighty"\).*FAIRWAY_ROLE: .*\(got "scheduler"\)/);
  expect(message).toMatch(/FAIRWAY_ADMIN_TOKEN/);
  expect(message).not.toContain("short-secret");
});

it("takes a fixed port for the embedded PostgreSQL, or none", () => {
  expect(loadConfig({}).FAIRWAY_EMBEDDED_PG_PORT).toBeUndefined();
  expect(loadConfig({ FAIRWAY_EMBEDDED_PG_PORT: "5433" }).FAIRWAY_EMBEDDED_PG_PORT).toBe(5433);
  expect(() => loadConfig({ FAIRWAY_EMBEDDED_PG_PORT: "70000" })).toThrow(/FAIRWAY_EMBEDDED_PG_PORT/);
});

it("sends email through SMTP or an HTTP mail API, set whole, not both; never echoing a key", () => {
  expect(loadConfig({ FAIRWAY_MAIL_API_URL: "https://api.resend.com", FAIRWAY_MAIL_API_KEY: "re_k" })).toMatchObject({
    FAIRWAY_MAIL_API_URL: "https://api.resend.com",
    FAIRWAY_MAIL_FROM: "fairway@localhost",
  });
  expect(() => loadConfig({ FAIRWAY_MAIL_API_KEY: "k" })).toThrow(
    /FAIRWAY_MAIL_API_KEY: set both FAIRWAY_MAIL_API_URL and FAIRWAY_MAIL_API_KEY, or neither/,
  );
  expect(() =>
    loadConfig({
      FAIRWAY_SMTP_URL: "smtp://localhost:25",
      FAIRWAY_MAIL_API_URL: "https://m.example",
      FAIRWAY_MAIL_API_KEY: "k",
    }),
  ).toThrow(/set FAIRWAY_SMTP_URL or FAIRWAY_MAIL_API_URL for email, not both/);
  let message = "";
  try {
    loadConfig({ FAIRWAY_MAIL_API_KEY: "re_secret_value" });
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message).toMatch(/FAIRWAY_MAIL_API_KEY/);
  expect(message).not.toContain("re_secret_value");
});

it("takes the portal's title and an accent colour readable on white; refuses a pale or malformed one", () => {
  expect(portalBrandOf(loadConfig({}))).toEqual({ title: "Fairway", accent: null });
  expect(
    portalBrandOf(loadConfig({ FAIRWAY_PORTAL_TITLE: " Acme Scheduler ", FAIRWAY_PORTAL_ACCENT: "#0B6E4F" })),
  ).toEqual({ title: "Acme Scheduler", accent: "#0b6e4f" });
  expect(portalBrandOf(loadConfig({ FAIRWAY_PORTAL_ACCENT: "#036" })).accent).toBe("#003366");
  expect(() => loadConfig({ FAIRWAY_PORTAL_ACCENT: "#ffeb3b" })).toThrow(
    /FAIRWAY_PORTAL_ACCENT: #ffeb3b on white has a contrast of 1\.\d\d:1, under the 4\.5:1 text needs/,
  );
  expect(() => loadConfig({ FAIRWAY_PORTAL_ACCENT: "green" })).toThrow(/FAIRWAY_PORTAL_ACCENT: .*not a hex colour/);
  expect(() => loadConfig({ FAIRWAY_PORTAL_TITLE: "x".repeat(61) })).toThrow(/FAIRWAY_PORTAL_TITLE: at most 60/);
});

it("says what a number setting takes instead of zod's NaN", () => {
  expect(() => loadConfig({ PORT: "abc" })).toThrow(
    /PORT: must be a whole number \(a TCP port\) from 0 to 65535 \(got "abc"\)/,
  );
  expect(() => loadConfig({ FAIRWAY_POLL_MS: "2.5" })).toThrow(
    /FAIRWAY_POLL_MS: must be a whole number \(milliseconds\) from 10 to 10000/,
  );
  expect(() => loadConfig({ FAIRWAY_GRACE_MS: "-1" })).toThrow(
    /FAIRWAY_GRACE_MS: must be a whole number \(milliseconds\) of 0 or more/,
  );
  expect(() => loadConfig({ FAIRWAY_API_RATE_PER_SECOND: "lots" })).toThrow(/requests per second, 0 \(off\) or more/);
  expect(loadConfig({ PORT: "9000" }).PORT).toBe(9000);
});
