// Canary searches against the real server (issue 45, findings 4 and 6): flows run with distinctive
// token and secret values — the admin token, a tenant key, a signing secret, a portal link and its
// session, secret values holding URLs — and no part of any of them may appear in a log line, an API
// response that is not the one handing it out, or a stored attempt. A secret that is a URL must not
// leak its host through a DNS or connection error either.
import { afterAll, beforeAll, expect, test } from "vitest";
import { query, sql } from "@fairway/store";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";

const HOST_SECRET = "http://leak-me-8842.invalid:9/hook";
const IP_SECRET = "http://127.0.0.1:9/ip-canary-path";
const HEADER_SECRET = "hdr-canary-5531-value";

let db: TestDb;
let server: ServerProcess;
let key: string;
let signingSecret: string;
/** Every response body seen, except the ones that hand a credential out. */
const seen: string[] = [];

async function call(method: string, path: string, opts: { token?: string; body?: unknown; keep?: boolean } = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    redirect: "manual",
    headers: {
      authorization: `Bearer ${opts.token ?? key}`,
      ...(opts.body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  if (opts.keep !== false) seen.push(`${res.headers.get("location") ?? ""} ${text}`);
  return { status: res.status, text, location: res.headers.get("location"), json: () => JSON.parse(text) };
}

beforeAll(async () => {
  db = await createTestDb({ max: 2 });
  server = await startServerProcess({ DATABASE_URL: db.url, FAIRWAY_POLL_MS: "50", FAIRWAY_LOG_LEVEL: "debug" });
  const admin = server.adminToken;
  const t = await call("POST", "/v1/admin/tenants", { token: admin, body: { id: "canary", name: "c" }, keep: false });
  signingSecret = t.json().signingSecret;
  key = (await call("POST", "/v1/admin/tenants/canary/keys", { token: admin, keep: false })).json().key;
  for (const [name, value] of [
    ["HOST_URL", HOST_SECRET],
    ["IP_URL", IP_SECRET],
    ["HDR", HEADER_SECRET],
  ]) {
    expect((await call("PUT", `/v1/secrets/${name}`, { body: { value } })).status).toBeLessThan(300);
  }
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

/** A signed token's secret half (its first half is base64 of readable claims). */
const mac = (token: string) => token.split(".")[1];

/** Every run of 10 characters of `value` (every 5th start): none may appear in `text`. */
function expectNoPart(text: string, value: string, what: string) {
  const hay = text.toLowerCase();
  for (let i = 0; i + 10 <= value.length; i += 5) {
    const part = value.slice(i, i + 10).toLowerCase();
    expect(hay.includes(part), `${what}: "${part}" found`).toBe(false);
  }
}

test("no part of a token or secret reaches a log line, a response or a stored attempt", async () => {
  // A portal link and its session, opened on canonical and non-canonical paths.
  const link = (
    await call("POST", "/v1/admin/tenants/canary/portal-link", { token: server.adminToken, body: {}, keep: false })
  ).json();
  const linkToken = String(link.url).split("/open/")[1];
  const opened = await call("GET", `/dashboard/open/${linkToken}`, { keep: false });
  const session = opened.location!.split("/portal/")[1].split("/")[0];
  for (const p of [
    `/dashboard/portal/${session}/jobs`,
    `//dashboard/portal/${session}/jobs`,
    `/Dashboard/open/${linkToken}`,
  ]) {
    // Not kept: the portal's own pages link to the session, and a 404 names the path it was asked for.
    await call("GET", p, { keep: false });
  }
  // Jobs whose URL is a secret: a host that never resolves, and a loopback port that refuses.
  const ids: string[] = [];
  for (const url of ["${secrets.HOST_URL}", "${secrets.IP_URL}"]) {
    const r = await call("POST", "/v1/jobs", {
      body: {
        name: "leaky",
        schedule: { delayMs: 0 },
        target: { url, headers: { "x-key": "${secrets.HDR}" } },
        retry: { maxAttempts: 1 },
      },
    });
    expect(r.status).toBe(201);
    ids.push(r.json().id);
  }
  const triggers: string[] = [];
  for (const id of ids) {
    const page = await until(
      () => call("GET", `/v1/jobs/${id}/triggers`).then((r) => r.json()),
      (p: { data: Array<{ id: string; status: string }> }) => p.data[0]?.status === "dead",
      30_000,
    );
    const t = await call("GET", `/v1/triggers/${page.data[0].id}`);
    triggers.push(t.text);
  }
  // The attempts say what failed, without the secret's parts.
  expect(triggers.join("\n")).toContain("[secret]");
  // Failed sign-ins with the wrong token, and a logged request with the right one.
  await call("GET", "/v1/jobs", { token: `${key.slice(0, -2)}xx` });
  await call("GET", "/v1/admin/tenants", { token: server.adminToken });

  const attempts = await query<{ row: string }>(
    db.store.db,
    sql`SELECT row_to_json(x)::text AS row FROM triggers x
        UNION ALL SELECT row_to_json(x)::text FROM attempt_log x
        UNION ALL SELECT row_to_json(x)::text FROM success_detail x
        UNION ALL SELECT row_to_json(x)::text FROM dead_letters x`,
  );
  const stored = attempts.map((a) => a.row).join("\n");
  expect(attempts.length).toBeGreaterThanOrEqual(2);
  const log = server.output();
  for (const [what, text] of [
    ["log", log],
    ["responses", seen.join("\n")],
    ["stored attempts", stored],
  ] as const) {
    // The distinctive parts of each value (the log rightly holds "http://127.0.0.1:<port>" of its own).
    for (const value of [
      "leak-me-8842.invalid",
      "/ip-canary-path",
      HEADER_SECRET,
      key,
      signingSecret,
      server.adminToken,
      mac(linkToken),
      mac(session),
    ]) {
      expectNoPart(text, value, `${what} / ${value.slice(0, 12)}`);
    }
  }
  // The IP secret's address is its host: attempts name it nowhere.
  expect(`${stored}\n${triggers.join("\n")}`).not.toContain("127.0.0.1");
}, 90_000);
