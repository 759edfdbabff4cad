// Signing-secret rotation: during the overlap a delivery carries two `v1,` signatures and
// verifies with BOTH the old and the new secret under the official `standardwebhooks` library; once
// the overlap has passed, only the new secret signs.
import { afterAll, beforeAll, expect, test } from "vitest";
import { Webhook } from "standardwebhooks";
import { Executor } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { query, sql } from "@fairway/store";
import { startReceiver, type Delivery, type Receiver } from "../support/receiver.ts";
import { seedPool } from "../support/seed.ts";
import { createHarness, type Harness } from "./harness.ts";

let h: Harness;
let receiver: Receiver;
const transport = createUndiciTransport({ allowPrivate: true });
let executor: Executor;

beforeAll(async () => {
  h = await createHarness({ allowPrivateTargets: true });
  receiver = await startReceiver();
  await seedPool(h.db, "webhook", 10);
  executor = new Executor({ db: h.db, transport, allowPrivateTargets: true, pollMs: 20, settleLingerMs: 0 }).start();
});
afterAll(async () => {
  await executor.stop(1000);
  await transport.close();
  await receiver.close();
  await h.tdb.drop();
});

async function deliverOne(key: string, name: string): Promise<Delivery> {
  const r = await h.call("POST", "/v1/jobs", {
    token: key,
    body: { name, schedule: { delayMs: 0 }, target: { url: `${receiver.url}/ok` }, payload: { name } },
  });
  expect(r.status).toBe(201);
  executor.wake();
  const all = await receiver.waitFor((d) =>
    d.some((x) => (x.body as { payload?: { name?: string } }).payload?.name === name),
  );
  return all.find((x) => (x.body as { payload?: { name?: string } }).payload?.name === name)!;
}

function verifies(secret: string, d: Delivery): boolean {
  try {
    new Webhook(secret).verify(JSON.stringify(d.body), d.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

test("old and new secret both verify during the overlap; only the new one after it", async () => {
  const t = await h.tenant("rot");
  const oldSecret = t.signingSecret;
  expect(oldSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

  const before = await deliverOne(t.key, "before-rotation");
  expect(String(before.headers["webhook-signature"]).split(" ")).toHaveLength(1);
  expect(verifies(oldSecret, before)).toBe(true);

  const rot = await h.call("POST", "/v1/admin/tenants/rot/signing-secret/rotate");
  expect(rot.status).toBe(200);
  const { signingSecret: newSecret, previousSecretExpiresAt } = (await rot.json()) as {
    signingSecret: string;
    previousSecretExpiresAt: string;
  };
  expect(newSecret).toMatch(/^whsec_/);
  expect(newSecret).not.toBe(oldSecret);
  expect(new Date(previousSecretExpiresAt).getTime()).toBeGreaterThan(Date.now());
  // Neither secret is shown again.
  const shown = await (await h.call("GET", "/v1/admin/tenants/rot")).text();
  expect(shown).not.toContain(newSecret.slice(6));
  expect(shown).not.toContain(oldSecret.slice(6));

  const during = await deliverOne(t.key, "during-overlap");
  const sigs = String(during.headers["webhook-signature"]).split(" ");
  expect(sigs).toHaveLength(2);
  for (const s of sigs) expect(s).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  expect(verifies(oldSecret, during)).toBe(true);
  expect(verifies(newSecret, during)).toBe(true);
  // The body is the signed content: a tampered body verifies with neither.
  const tampered = { ...during, body: { ...(during.body as object), payload: { name: "tampered" } } };
  expect(verifies(oldSecret, tampered) || verifies(newSecret, tampered)).toBe(false);

  // The overlap ends: move the expiry into the past (the executor reads it on every claim).
  await h.db.execute(sql`UPDATE tenants SET previous_secret_expires_at = now() - interval '1 second' WHERE id = 'rot'`);
  const after = await deliverOne(t.key, "after-overlap");
  expect(String(after.headers["webhook-signature"]).split(" ")).toHaveLength(1);
  expect(verifies(newSecret, after)).toBe(true);
  expect(verifies(oldSecret, after)).toBe(false);
});

test("rotating an unknown tenant is a 404 and a tenant key cannot rotate", async () => {
  const t = await h.tenant("rot-b");
  expect((await h.call("POST", "/v1/admin/tenants/nope/signing-secret/rotate")).status).toBe(404);
  expect((await h.call("POST", "/v1/admin/tenants/rot-b/signing-secret/rotate", { token: t.key })).status).toBe(403);
  const [row] = await query<{ p: string | null }>(
    h.db,
    sql`SELECT previous_signing_secret AS p FROM tenants WHERE id = 'rot-b'`,
  );
  expect(row.p).toBeNull();
});
