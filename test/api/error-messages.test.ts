// Every union and reserved field answers with a stable code and a message that says what to send
// instead. A table of inputs → the exact code and the key words of the message, over real HTTP; a
// refused request writes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startApi, type ApiHarness } from "./harness.ts";

let h: ApiHarness;
let strict: ApiHarness;
let key: string;
let strictKey: string;
beforeAll(async () => {
  h = await startApi();
  strict = await startApi({ allowPrivateTargets: false });
  key = await h.tenant("acme");
  strictKey = await strict.tenant("acme");
});
afterAll(async () => {
  await h?.close();
  await strict?.close();
});

const target = { url: "https://example.com/hook" };
const job = (over: Record<string, unknown>) => ({ name: "j", schedule: { cron: "0 * * * *" }, target, ...over });
const without = (k: string) => {
  const j: Record<string, unknown> = job({});
  delete j[k];
  return j;
};

type Row = [label: string, body: unknown, code: string, words: string[]];
const jobCases: Row[] = [
  [
    "no schedule",
    without("schedule"),
    "validation_error",
    ["schedule: required", "give exactly one of cron, at or delayMs", '"cron"'],
  ],
  [
    "empty schedule",
    job({ schedule: {} }),
    "validation_error",
    ["schedule: give exactly one of cron, at or delayMs (got none)"],
  ],
  [
    "cron with at",
    job({ schedule: { cron: "0 * * * *", at: "2030-01-01T00:00:00Z" } }),
    "validation_error",
    ["give exactly one of cron, at or delayMs (got cron and at)"],
  ],
  [
    "delayMs as a string",
    job({ schedule: { delayMs: "5000" } }),
    "validation_error",
    ["schedule.delayMs: must be a number of milliseconds", "not a string"],
  ],
  [
    "delayMs fractional",
    job({ schedule: { delayMs: 1.5 } }),
    "validation_error",
    ["schedule.delayMs: must be a whole number"],
  ],
  [
    "timezone with at",
    job({ schedule: { at: "2030-01-01T00:00:00Z", timezone: "UTC" } }),
    "validation_error",
    ["schedule.timezone: only goes with cron", "remove timezone"],
  ],
  [
    "at without a zone",
    job({ schedule: { at: "2030-01-01T09:00:00" } }),
    "validation_error",
    ["schedule.at: must be an ISO-8601 date-time with a zone", "2030-01-01T09:00:00Z"],
  ],
  [
    "unknown schedule field",
    job({ schedule: { cron: "0 * * * *", every: "5m" } }),
    "validation_error",
    ['schedule: unknown field "every"', "allowed: cron, timezone, at, delayMs"],
  ],
  [
    "schedule a string",
    job({ schedule: "0 * * * *" }),
    "validation_error",
    ["schedule: must be an object", "exactly one of cron, at or delayMs"],
  ],
  ["bad cron", job({ schedule: { cron: "61 * * * *" } }), "invalid_cron", ["schedule.cron", "minute value 61"]],
  [
    "bad zone",
    job({ schedule: { cron: "0 * * * *", timezone: "Berlin" } }),
    "invalid_timezone",
    ["schedule.timezone", "IANA", "Europe/Berlin"],
  ],
  [
    "bad spread",
    job({ schedule: { cron: "0 0 * * *", spread: "10 minutes" } }),
    "invalid_spread",
    ["schedule.spread", "ISO 8601 duration", "PT10M"],
  ],
  [
    "spread longer than the period",
    job({ schedule: { cron: "*/5 * * * *", spread: "PT10M" } }),
    "invalid_spread",
    ["schedule.spread", "longer than PT5M", "shorter window"],
  ],
  [
    "spread on a one-time job",
    job({ schedule: { at: "2030-01-01T00:00:00Z", spread: "PT10M" } }),
    "validation_error",
    ["schedule.spread: only goes with cron"],
  ],
  [
    "reserved header webhook-signature",
    job({ target: { ...target, headers: { "Webhook-Signature": "x" } } }),
    "validation_error",
    ['target.headers.Webhook-Signature: "Webhook-Signature" is reserved', "Standard Webhooks signature", "remove it"],
  ],
  [
    "reserved header webhook-id",
    job({ target: { ...target, headers: { "webhook-id": "x" } } }),
    "validation_error",
    ['"webhook-id" is reserved', "Standard Webhooks signature"],
  ],
  [
    "reserved header host",
    job({ target: { ...target, headers: { host: "x" } } }),
    "validation_error",
    ['"host" is reserved', "from the URL"],
  ],
  [
    "reserved prefix fairway-",
    job({ target: { ...target, headers: { "fairway-x": "1" } } }),
    "validation_error",
    ['"fairway-x" is reserved', "fairway- prefix"],
  ],
  [
    "header value with a newline",
    job({ target: { ...target, headers: { "x-a": "1\r\nx-b: 2" } } }),
    "validation_error",
    ["target.headers.x-a: must not contain line breaks"],
  ],
  [
    "bad method",
    job({ target: { ...target, method: "OPTIONS" } }),
    "validation_error",
    ["target.method: must be one of POST, PUT, PATCH, GET, HEAD, DELETE"],
  ],
  [
    "body on a GET",
    job({ target: { ...target, method: "GET", body: "x" } }),
    "body_not_allowed",
    ["carries no body", "remove target.body"],
  ],
  [
    "missing target url",
    job({ target: { method: "POST" } }),
    "validation_error",
    ["target.url: required", "absolute http(s) URL"],
  ],
  ["target a string", job({ target: "https://example.com" }), "validation_error", ["target: must be an object"]],
  ["missing name", without("name"), "validation_error", ["name: required"]],
  [
    "unknown top-level field",
    job({ cron: "0 * * * *" }),
    "validation_error",
    ['unknown field "cron"', "allowed: name, type, schedule"],
  ],
  ["overlap value", job({ overlap: "never" }), "validation_error", ["overlap: must be one of allow, skip, buffer_one"]],
  [
    "misfire value",
    job({ misfire: "once" }),
    "validation_error",
    ["misfire: must be one of fire_once, skip, fire_all"],
  ],
  ["retry as number", job({ retry: 3 }), "validation_error", ["retry: must be an object"]],
  [
    "maxAttempts as string",
    job({ retry: { maxAttempts: "3" } }),
    "validation_error",
    ["retry.maxAttempts: must be a number of attempts"],
  ],
  [
    "not JSON",
    "{name:",
    "invalid_json",
    ["not valid JSON (", "send a JSON object with content-type: application/json"],
  ],
];

describe("POST /v1/jobs: input → code and message", () => {
  it.each(jobCases)("%s", async (_label, body, code, words) => {
    const r = await h.call(key, "POST", "/v1/jobs", body);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.code).toBe(code);
    for (const w of words) expect(r.json.error.message).toContain(w);
  });

  it("nothing was written by the refused requests", async () => {
    expect((await h.call(key, "GET", "/v1/jobs?status=active")).json.data).toEqual([]);
  });

  it("a private target names FAIRWAY_ALLOW_PRIVATE_TARGETS", async () => {
    const r = await strict.call(strictKey, "POST", "/v1/jobs", job({ target: { url: "http://127.0.0.1:8080/hook" } }));
    expect([r.status, r.json.error.code]).toEqual([400, "forbidden_target"]);
    expect(r.json.error.message).toContain("target.url: target host 127.0.0.1 is a private");
    expect(r.json.error.message).toContain("FAIRWAY_ALLOW_PRIVATE_TARGETS=true");
  });
});

describe("admin and query inputs", () => {
  const cases: Array<[string, string, string, unknown, string, string[]]> = [
    [
      "tenant with unknown field",
      "POST",
      "/v1/admin/tenants",
      { name: "x", quota: 5 },
      "validation_error",
      ['unknown field "quota"', "allowed: id, name"],
    ],
    [
      "tenant weight as string",
      "POST",
      "/v1/admin/tenants",
      { name: "x", weight: "2" },
      "validation_error",
      ["weight: must be a number from 0.01 to 1000"],
    ],
    [
      "tenant status",
      "PATCH",
      "/v1/admin/tenants/acme",
      { status: "off" },
      "validation_error",
      ["status: must be active or suspended"],
    ],
    [
      "pool without timeout",
      "PUT",
      "/v1/admin/pools/p1",
      { concurrency: 2 },
      "validation_error",
      ["timeoutMs: required"],
    ],
  ];
  it.each(cases)("%s", async (_l, method, path, body, code, words) => {
    const r = await h.call(ADMIN, method, path, body);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.code).toBe(code);
    for (const w of words) expect(r.json.error.message).toContain(w);
  });

  it("a list query with an unknown parameter names the allowed ones", async () => {
    const r = await h.call(key, "GET", "/v1/jobs?state=active");
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain('unknown field "state"');
    expect(r.json.error.message).toContain("status");
  });
});

describe("what to send instead", () => {
  it("a dead-letter replay without jobId names the field and its shape", async () => {
    const r = await h.call(key, "POST", "/v1/dead-letters/replay", {});
    expect([r.status, r.json.error.code]).toEqual([400, "validation_error"]);
    expect(r.json.error.message).toBe(
      'jobId: required: the id of the job whose dead letters to replay, e.g. {"jobId": "job_…"}',
    );
  });

  it("a portal link's ttlSeconds names its unit and range", async () => {
    const r = await h.call(ADMIN, "POST", "/v1/admin/tenants/acme/portal-link", { ttlSeconds: 5 });
    expect([r.status, r.json.error.code]).toEqual([400, "validation_error"]);
    expect(r.json.error.message).toBe("ttlSeconds: must be at least 30 (a number of seconds, 30-86400; default 900)");
    const big = await h.call(ADMIN, "POST", "/v1/admin/tenants/acme/portal-link", { ttlSeconds: 90_000 });
    expect(big.json.error.message).toContain("must be at most 86400 (a number of seconds");
  });

  it("a form-encoded body is told to send JSON with its content type", async () => {
    const res = await fetch(`${h.url}/v1/jobs`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/x-www-form-urlencoded" },
      body: "name=j&schedule=0",
    });
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect([res.status, body.error.code]).toEqual([400, "invalid_json"]);
    expect(body.error.message).toBe(
      "the request body was sent as application/x-www-form-urlencoded and is not JSON: send a JSON object with content-type: application/json",
    );
  });

  it("a JSON body sent as a form (curl -d without -H) is still read", async () => {
    const res = await fetch(`${h.url}/v1/jobs`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/x-www-form-urlencoded" },
      body: JSON.stringify(job({ name: "sent-as-form" })),
    });
    expect(res.status).toBe(201);
    await h.call(key, "DELETE", `/v1/jobs/${((await res.json()) as { id: string }).id}`);
  });

  it("max_jobs_exceeded names the quota and who can raise it", async () => {
    const small = await h.tenant("small", { maxJobs: 1 });
    expect((await h.call(small, "POST", "/v1/jobs", job({ name: "one" }))).status).toBe(201);
    const r = await h.call(small, "POST", "/v1/jobs", job({ name: "two" }));
    expect([r.status, r.json.error.code]).toEqual([409, "max_jobs_exceeded"]);
    expect(r.json.error.message).toContain("maxJobs quota of 1 live jobs");
    expect(r.json.error.message).toContain("DELETE /v1/jobs/:id");
    expect(r.json.error.message).toContain("ask the operator to raise maxJobs (PATCH /v1/admin/tenants/:id)");
  });
});
