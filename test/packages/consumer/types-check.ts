// Type-checked (tsc --noEmit, skipLibCheck off) in the fresh project against the packed .d.ts files.
import {
  createAdminClient,
  createClient,
  FairwayError,
  FairwayNotFoundError,
  type Job,
  type Trigger,
} from "@fairway/sdk";
import { verifyWebhook, type WebhookVerificationError } from "@fairway/sdk/webhooks";
import { createWorker, type JobContext } from "@fairway/worker";

/** @public checked by the compiler, called by nothing */
export async function typed(): Promise<void> {
  const client = createClient({ baseUrl: "http://127.0.0.1:8787", apiKey: "fw_x", maxRetries: 2 });
  const job: Job<{ to: string }> = await client.jobs.create({
    name: "n",
    type: "email.send",
    schedule: { at: new Date() },
    payload: { to: "x" },
  });
  const to: string | undefined = job.payload?.to;
  for await (const t of client.jobs.allTriggers(job.id)) {
    const status: Trigger["status"] = t.status;
    void status;
  }
  try {
    await client.jobs.get("nope");
  } catch (e) {
    if (e instanceof FairwayNotFoundError) e.code satisfies string;
    if (e instanceof FairwayError) e.status satisfies number;
  }
  const admin = createAdminClient({ baseUrl: "http://127.0.0.1:8787", adminToken: "t" });
  const tenant = await admin.tenants.create({ name: "t", maxInFlight: 5 });
  const v = await verifyWebhook({ secret: tenant.signingSecret, headers: new Headers(), body: "" }).catch(
    (e: WebhookVerificationError) => e.code,
  );
  void v;
  void to;

  const worker = createWorker<{ "email.send": { to: string } }>({
    databaseUrl: "postgres://x",
    handlers: {
      "email.send": async (ctx: JobContext<{ to: string }>) => {
        const address: string = ctx.payload.to;
        return address;
      },
    },
  });
  await worker.start();
  await worker.stop();
}
