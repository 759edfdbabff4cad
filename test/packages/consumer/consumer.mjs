// Run under plain `node` in a fresh project that installed the packed tarballs (pack-install.test.ts):
// creates a tenant, a key and a webhook job against a running server, verifies the real delivery with
// verifyWebhook, and runs a handler job through createWorker. Prints one JSON line of what it saw.
import { createServer } from "node:http";
import { createAdminClient, createClient } from "@fairway/sdk";
import { verifyWebhook } from "@fairway/sdk/webhooks";
import { createWorker } from "@fairway/worker";

const { FAIRWAY_URL, FAIRWAY_TOKEN, DATABASE_URL } = process.env;
const admin = createAdminClient({ baseUrl: FAIRWAY_URL, adminToken: FAIRWAY_TOKEN });
const tenant = await admin.tenants.create({ name: "consumer" });
const { key } = await admin.tenants.createKey(tenant.id);
const client = createClient({ baseUrl: FAIRWAY_URL, apiKey: key });

// A receiver that accepts only deliveries verifyWebhook accepts.
let delivered;
const verified = new Promise((resolve) => (delivered = resolve));
const receiver = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", async () => {
    try {
      const v = await verifyWebhook({ secret: tenant.signingSecret, headers: req.headers, body });
      res.writeHead(200).end();
      delivered({ id: v.id, payload: JSON.parse(body).payload });
    } catch (err) {
      res.writeHead(401).end(String(err.code));
    }
  });
});
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${receiver.address().port}/hook`;

const hookJob = await client.jobs.create({
  name: "hook",
  schedule: { delayMs: 0 },
  target: { url },
  payload: { hello: "world" },
});
const delivery = await verified;

const handled = [];
const worker = createWorker({
  databaseUrl: DATABASE_URL,
  pollMs: 50,
  logLevel: "error",
  handlers: { "email.send": async (ctx) => void handled.push(ctx.payload) },
});
await worker.start();
const emailJob = await client.jobs.create({
  name: "mail",
  type: "email.send",
  schedule: { delayMs: 0 },
  payload: { to: "a@example.com" },
});
let trigger;
for (let i = 0; i < 300 && trigger?.status !== "succeeded"; i++) {
  await new Promise((r) => setTimeout(r, 50));
  trigger = (await client.jobs.triggers(emailJob.id)).data[0];
}
await worker.stop(1000);
receiver.close();

// A wrong secret must fail verification.
let forged = "accepted";
await verifyWebhook({
  secret: "whsec_" + btoa("x".repeat(32)),
  headers: {
    "webhook-id": "a",
    "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
    "webhook-signature": "v1,AAAA",
  },
  body: "{}",
}).catch((e) => (forged = e.code));

const jobs = [];
for await (const j of client.jobs.all({ limit: 1 })) jobs.push(j.id);

console.log(
  JSON.stringify({
    tenant: tenant.id,
    hookJob: hookJob.id,
    deliveryId: delivery.id,
    deliveredPayload: delivery.payload,
    handled,
    emailTrigger: trigger?.status,
    forged,
    jobs: jobs.sort(),
    expectedJobs: [hookJob.id, emailJob.id].sort(),
  }),
);
