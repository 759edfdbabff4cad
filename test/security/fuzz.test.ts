// API fuzzing: fast-check drives every route with arbitrary params, query strings, headers
// and bodies — garbage JSON, wrong types, huge and unicode strings (lone surrogates, NUL), deep
// nesting, prototype-pollution keys, other tenants' ids. The properties: no 5xx for any input, a 4xx
// never writes anything (row counts of every table unchanged), and Object.prototype stays clean.
import fc from "fast-check";
import { afterAll, beforeAll, expect, test } from "vitest";
import { generateSecretsKey, loadSecretsKeyring } from "@fairway/core";
import { sql } from "@fairway/store";
import { scopeOf } from "../../packages/api/src/route.ts";
import { ROUTES as DECLARED } from "../../packages/api/src/route-table.ts";
import { ADMIN_TOKEN, createHarness, type Harness } from "./harness.ts";

let h: Harness;
let a: Awaited<ReturnType<Harness["tenant"]>>;
let b: Awaited<ReturnType<Harness["tenant"]>>;
const ids: Record<string, string> = {};

const validJob = DECLARED.find((r) => r.method === "post" && r.path === "/v1/jobs")!.body!.example;

beforeAll(async () => {
  // With a secrets key, so the secrets routes answer (without one they are a deliberate 503).
  h = await createHarness({ secretsKey: await loadSecretsKeyring(generateSecretsKey()) });
  a = await h.tenant("fuzz-a");
  b = await h.tenant("fuzz-b");
  for (const [who, t] of [
    ["a", a],
    ["b", b],
  ] as const) {
    const job = (await (await h.call("POST", "/v1/jobs", { token: t.key, body: validJob })).json()) as { id: string };
    ids[`${who}Job`] = job.id;
    const trg = (await (await h.call("POST", `/v1/jobs/${job.id}/run`, { token: t.key })).json()) as { id: string };
    ids[`${who}Trigger`] = trg.id;
    await h.db.execute(sql`UPDATE triggers SET status = 'dead' WHERE id = ${trg.id}`);
  }
});
afterAll(async () => {
  await h.tdb.drop();
});

type Scope = "tenant" | "admin" | "open";
type Route = [method: string, path: string, scope: Scope, validBody: Record<string, unknown> | null];
// Every declared route, with the valid body the fuzzer starts from (its declared example); path
// parameters are filled by the fuzzer. Then two that are no route at all.
const ROUTES: Route[] = [
  ...DECLARED.map((r): Route => [r.method.toUpperCase(), r.path, scopeOf(r.path), r.body?.example ?? null]),
  ["PUT", "/v1/jobs/:id", "tenant", validJob],
  ["POST", "/v1/nope", "tenant", validJob],
];
const FIELDS = [
  "name",
  "schedule",
  "target",
  "payload",
  "retry",
  "timeoutMs",
  "priority",
  "overlap",
  "misfire",
  "catchupWindowMs",
  "type",
  "id",
  "status",
  "weight",
  "maxInFlight",
  "ratePerSecond",
  "burst",
  "maxJobs",
  "maxPayloadBytes",
  "concurrency",
  "leaseMs",
  "maxAttempts",
];

const nasty = fc.constantFrom(
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff",
  "x\ud83d",
  "😀",
  "é",
  "Ω≈ç√",
  "\u202e",
  "..",
  "../../etc/passwd",
  "%",
  "%00",
  "%2F",
  "__proto__",
  "constructor",
  "prototype",
  "null",
  "true",
  "-1",
  "0",
  "1e309",
  "NaN",
  "9".repeat(400),
  "<script>",
  "'; DROP TABLE jobs; --",
);
// What Postgres text refuses (NUL) or cannot store faithfully (an unpaired surrogate), inside otherwise fine text.
const storageHostile = fc
  .record({
    pre: fc.string({ maxLength: 5 }),
    bad: fc.constantFrom("\u0000", "\ud800", "\udc00", "\ud83d"),
    post: fc.string({ maxLength: 5 }),
  })
  .map(({ pre, bad, post }) => pre + bad + post);
const text = fc.oneof(
  { weight: 3, arbitrary: nasty },
  { weight: 2, arbitrary: storageHostile },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constant("y".repeat(5000)) },
);
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  text,
  fc.jsonValue({ maxDepth: 3 }),
  fc.anything({ maxDepth: 2, withNullPrototype: true, withObjectString: true }).map((v) => {
    try {
      return JSON.parse(JSON.stringify(v) ?? "null");
    } catch {
      return null;
    }
  }),
  fc.dictionary(text, text, { maxKeys: 2 }),
  fc.integer({ min: 10, max: 3000 }).map((d) => JSON.parse("[".repeat(d) + "]".repeat(d))),
  fc.integer({ min: 1, max: 400_000 }).map((n) => "p".repeat(n)),
);
const pollutionKey = fc.constantFrom("__proto__", "constructor", "prototype", "toString", "hasOwnProperty");
const json = (v: unknown) => JSON.stringify(v) ?? "null";

/** Bodies for one route: mostly its valid body with one field (or one nested field) broken. */
function bodyFor(base: Record<string, unknown> | null): fc.Arbitrary<string | undefined> {
  const valid = base ?? {};
  const own = Object.keys(valid);
  const field = own.length
    ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...own) }, { weight: 1, arbitrary: fc.constantFrom(...FIELDS) })
    : fc.constantFrom(...FIELDS);
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({ field, value: anyJson }).map(({ field, value }) => json({ ...valid, [field]: value })),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({ url: fc.oneof(text, fc.webUrl()), hk: fc.oneof(text, pollutionKey), hv: fc.oneof(text, anyJson) })
        .map(({ url, hk, hv }) =>
          json({ ...valid, target: { url: url.length > 3 ? url : "https://example.com/", headers: { [hk]: hv } } }),
        ),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({
          cron: fc.oneof(
            text,
            fc.constantFrom("* * * * *", "0 0 31 2 *", "*/0 * * * *", "60 * * * *", "* * * * * * *"),
          ),
          timezone: fc.oneof(text, fc.constantFrom("UTC", "Mars/Base")),
          at: fc.oneof(
            text,
            fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          ),
        })
        .chain((s) => fc.constantFrom({ cron: s.cron, timezone: s.timezone }, { at: s.at }, { delayMs: s.cron }))
        .map((schedule) => json({ ...valid, schedule })),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({ k: pollutionKey, v: anyJson, nested: fc.boolean() })
        .map(({ k, v, nested }) =>
          nested
            ? json({ ...valid, payload: JSON.parse(`{${json(k)}:${json(v)}}`) })
            : `{${json(k)}:${json(v)},${json(valid).slice(1)}`,
        ),
    },
    {
      weight: 2,
      arbitrary: fc.record({ k: text, v: text }).map(({ k, v }) => json({ ...valid, payload: { [k]: v, list: [v] } })),
    },
    { weight: 1, arbitrary: anyJson.map(json) },
    {
      weight: 1,
      arbitrary: fc.oneof(fc.string({ maxLength: 60 }), fc.constantFrom("{", "[}", '{"a":}', "\u0000", "", "{}{}")),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

const param = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom("aJob", "aJob", "bJob", "aTrigger", "bTrigger").map((k) => ids[k]) },
  { weight: 1, arbitrary: fc.constantFrom("fuzz-a", "fuzz-b", "webhook") },
  { weight: 1, arbitrary: text },
);
const headerValue = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 300,
});
// Routes that take a body are drawn five times as often: that is where the input surface is.
const route = fc.oneof(...ROUTES.map((r) => ({ weight: r[3] ? 5 : 1, arbitrary: fc.constant(r) })));
const request = route.chain((route) =>
  fc.record({
    route: fc.constant(route),
    p1: param,
    p2: param,
    query: fc.option(
      fc.dictionary(
        fc.constantFrom("limit", "cursor", "jobId", "x", "__proto__"),
        fc.oneof(text, fc.integer().map(String)),
        { maxKeys: 3 },
      ),
    ),
    body: bodyFor(route[3]),
    idem: fc.option(headerValue, { nil: undefined }),
    requestId: fc.option(headerValue, { nil: undefined }),
    contentType: fc.option(
      fc.constantFrom(
        "application/json",
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
      ),
      { nil: undefined },
    ),
    auth: fc.oneof(
      { weight: 8, arbitrary: fc.constant("right" as const) },
      fc.constantFrom("wrong-scope" as const, "other-tenant" as const, "garbage" as const, "none" as const),
    ),
  }),
);

/** Percent-encodes anything; a lone surrogate (which encodeURIComponent refuses) goes out as the
 *  invalid UTF-8 sequence a raw client could send. */
function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return encodeURIComponent(s.replace(/[\ud800-\udfff]/g, "")) + "%ED%A0%80";
  }
}

test("no input yields a 5xx, and a 4xx never writes", async () => {
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const [method, pattern, scope] = r.route;
      const path = pattern.replace(/:\w+/, enc(r.p1)).replace(/:\w+/, enc(r.p2));
      const qs = r.query ? `?${new URLSearchParams(r.query as Record<string, string>)}` : "";
      const token = {
        right: scope === "admin" ? ADMIN_TOKEN : a.key,
        "wrong-scope": scope === "admin" ? a.key : ADMIN_TOKEN,
        "other-tenant": b.key,
        garbage: "fw_garbage",
        none: null,
      }[r.auth];
      const headers: Record<string, string> = {};
      if (r.idem !== undefined) headers["idempotency-key"] = r.idem;
      if (r.requestId !== undefined) headers["x-request-id"] = r.requestId;
      if (r.contentType !== undefined) headers["content-type"] = r.contentType;
      const before = await h.counts();
      const res = await h.call(method, path + qs, { token, raw: r.body, headers });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const text = await res.text();
      expect(res.status, `${method} ${path}${qs} → ${text}`).toBeLessThan(500);
      if (res.status >= 400) {
        expect(JSON.parse(text).error.code, text).toMatch(/^[a-z_]+$/);
        expect(await h.counts(), `${method} ${path} ${res.status} wrote rows`).toEqual(before);
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }),
    { numRuns: 400, seed: Number(process.env.FUZZ_SEED ?? 20260501) },
  );
  // The run exercised both sides of the property: successes and refusals.
  const ok = [...statuses].filter(([s]) => s < 300).reduce((n, [, c]) => n + c, 0);
  const refused = [...statuses].filter(([s]) => s >= 400).reduce((n, [, c]) => n + c, 0);
  console.log("fuzz statuses", Object.fromEntries(statuses));
  expect(ok).toBeGreaterThan(20);
  expect(refused).toBeGreaterThan(100);
  expect(h.logs.filter((l) => l.includes('"level":"error"'))).toEqual([]);
});
