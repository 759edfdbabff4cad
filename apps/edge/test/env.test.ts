// The Worker's configuration: defaults as documented in env.ts, and a misconfiguration named plainly.
import { describe, expect, it } from "vitest";
import { ConfigError, readConfig, type Env } from "../src/env.ts";

const base: Env = {
  HYPERDRIVE: { connectionString: "postgres://u:p@db.example/fw" },
  FAIRWAY_ADMIN_TOKEN: "fwadmin_0123456789abcdef",
  FAIRWAY_SECRETS_KEY: btoa("k".repeat(32)),
};

async function error(env: Env): Promise<string> {
  try {
    await readConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("readConfig", () => {
  it("applies the documented defaults", async () => {
    const cfg = await readConfig(base);
    expect(cfg).toMatchObject({
      databaseUrl: "postgres://u:p@db.example/fw",
      upstash: null,
      allowPrivateTargets: false,
      runMs: 50_000,
      graceMs: 5_000,
      pollMs: 1_000,
      apiRatePerSecond: 1000,
    });
    // The defaults end a run (and its grace) before the next minute's cron fires.
    expect(cfg.runMs + cfg.graceMs).toBeLessThan(60_000);
    expect(cfg.mailApi).toBeNull(); // no email channels without a mail API
  });

  it("reads the HTTP mail API, its key and the From address", async () => {
    const cfg = await readConfig({
      ...base,
      FAIRWAY_MAIL_API_URL: "https://api.resend.com",
      FAIRWAY_MAIL_API_KEY: "re_key",
    });
    expect(cfg.mailApi).toEqual({ url: "https://api.resend.com", apiKey: "re_key", from: "fairway@localhost" });
    expect(
      (
        await readConfig({
          ...base,
          FAIRWAY_MAIL_API_URL: "https://m.example",
          FAIRWAY_MAIL_API_KEY: "k",
          FAIRWAY_MAIL_FROM: "ops@example.com",
        })
      ).mailApi?.from,
    ).toBe("ops@example.com");
  });

  it("reads Upstash, the key prefix and the private-target opt-in", async () => {
    const cfg = await readConfig({
      ...base,
      UPSTASH_REDIS_REST_URL: "https://x.upstash.io",
      UPSTASH_REDIS_REST_TOKEN: "t",
      FAIRWAY_REDIS_PREFIX: "fw1:",
      FAIRWAY_ALLOW_PRIVATE_TARGETS: "true",
    });
    expect(cfg.upstash).toEqual({ url: "https://x.upstash.io", token: "t", prefix: "fw1:" });
    expect(cfg.allowPrivateTargets).toBe(true);
    expect((await readConfig({ ...base, FAIRWAY_ALLOW_PRIVATE_TARGETS: "1" })).allowPrivateTargets).toBe(false); // only "true" opts in
  });

  it("names what is missing or malformed", async () => {
    expect(await error({ ...base, HYPERDRIVE: undefined as never })).toMatch(/HYPERDRIVE/);
    expect(await error({ ...base, FAIRWAY_ADMIN_TOKEN: undefined })).toMatch(/FAIRWAY_ADMIN_TOKEN/);
    expect(await error({ ...base, FAIRWAY_ADMIN_TOKEN: "short" })).toMatch(/at least 16/);
    expect(await error({ ...base, UPSTASH_REDIS_REST_URL: "https://x.upstash.io" })).toMatch(
      /both UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN/,
    );
    expect(await error({ ...base, FAIRWAY_RUN_MS: "soon" })).toMatch(/FAIRWAY_RUN_MS must be an integer/);
    expect(await error({ ...base, FAIRWAY_POLL_MS: "0" })).toMatch(/FAIRWAY_POLL_MS/);
    expect(await error({ ...base, FAIRWAY_LOG_LEVEL: "loud" })).toMatch(/FAIRWAY_LOG_LEVEL/);
    expect(await error({ ...base, FAIRWAY_MAIL_API_URL: "https://api.resend.com" })).toMatch(
      /both FAIRWAY_MAIL_API_URL and FAIRWAY_MAIL_API_KEY/,
    );
    expect(await error({ ...base, FAIRWAY_MAIL_API_URL: "api.resend.com", FAIRWAY_MAIL_API_KEY: "k" })).toMatch(
      /FAIRWAY_MAIL_API_URL must be an http/,
    );
    // The Worker refuses to start without a secrets key, or with one that is not 32 bytes.
    expect(await error({ ...base, FAIRWAY_SECRETS_KEY: undefined })).toMatch(/FAIRWAY_SECRETS_KEY must be set/);
    expect(await error({ ...base, FAIRWAY_SECRETS_KEY: btoa("short") })).toMatch(
      /FAIRWAY_SECRETS_KEY must be 32 bytes/,
    );
    expect(await error({ ...base, FAIRWAY_SECRETS_KEY_PREVIOUS: "%%%" })).toMatch(
      /FAIRWAY_SECRETS_KEY_PREVIOUS is not base64/,
    );
  });
});
