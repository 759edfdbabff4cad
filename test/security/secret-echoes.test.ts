// What a target answers, and what a failed connection says, keep no part of a secret (issue 60): a
// real receiver echoes a secret header's value in its response headers — in part, whole and
// percent-encoded — and a secret IPv6 host refuses the connection. The attempt's stored record
// (response headers, body, error) names none of it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { RunAbort } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { runTrigger } from "../../packages/executor/src/run-trigger.ts";

// Characters that percent-encoding changes, so the encoded form differs from the value.
const TOKEN = "tok/en+secret value=0123456789abcdef&more";

let receiver: Server;
let port: number;
beforeAll(async () => {
  receiver = createServer((req, res) => {
    const token = String(req.headers["x-token"] ?? "");
    res.setHeader("x-echo-part", `seen ${token.slice(4, 24)} here`);
    res.setHeader("x-echo-encoded", `next=${encodeURIComponent(token)}`);
    res.setHeader("x-echo-uri", encodeURI(`https://example.com/?t=${token}`));
    res.end(`encoded: ${encodeURIComponent(token)}`);
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  port = (receiver.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => receiver.close(r));
});

function trigger(target: { url: string; headers?: Record<string, string> }) {
  return {
    id: "trg_secret_echo",
    tenantId: "t",
    jobId: "job_x",
    type: "webhook",
    kind: "schedule",
    scheduledFor: new Date(),
    attempt: 1,
    maxAttempts: 1,
    leaseToken: "l",
    priority: 0,
    jobName: "j",
    target,
    payload: null,
    timeoutMs: 5000,
    initialDelayMs: 1000,
    maxDelayMs: 60_000,
    backoff: "exponential",
    jitter: "none",
    secrets: ["whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdHRlc3Q="],
    atCap: false,
  } as never;
}

async function run(target: { url: string; headers?: Record<string, string> }, values: Record<string, string>) {
  const transport = createUndiciTransport({ allowPrivate: true });
  try {
    return await runTrigger(trigger(target), new RunAbort(), {
      transport,
      handlers: {},
      allowPrivateTargets: true,
      now: Date.now,
      secrets: async (_tenant, names) => ({
        values: new Map(names.filter((n) => n in values).map((n) => [n, values[n]])),
        missing: names.filter((n) => !(n in values)),
      }),
    });
  } finally {
    await transport.close();
  }
}

/** Every run of 8 characters of `secret`, and its percent-encodings, absent from `text`. */
function expectNoPart(text: string, secret: string) {
  const lower = text.toLowerCase();
  for (const form of [secret, encodeURIComponent(secret), encodeURI(secret)]) {
    const f = form.toLowerCase();
    for (let i = 0; i + 8 <= f.length; i++)
      expect(lower, `"${f.slice(i, i + 8)}" of ${form}`).not.toContain(f.slice(i, i + 8));
  }
}

test("response headers keep no fragment of a secret, and no percent-encoded one", async () => {
  const r = await run({ url: `http://127.0.0.1:${port}/hook`, headers: { "x-token": "${secrets.TOKEN}" } }, { TOKEN });
  expect(r.outcome).toBe("success");
  const headers = JSON.stringify(r.responseHeaders);
  expect(headers).toContain("x-echo-part");
  expect(headers).toContain("[secret]");
  expectNoPart(headers, TOKEN);
  expectNoPart(r.responseBody ?? "", TOKEN);
  expect(r.responseBody).toContain("[secret]");
});

test("a secret IPv6 host is not named in the connection error", async () => {
  // Port 9 (discard) on loopback: nothing listens, so the connection is refused.
  const r = await run({ url: "http://${secrets.HOST}:9/hook" }, { HOST: "[::1]" });
  expect(r.outcome).toBe("network_error");
  expect(r.error).toBeTruthy();
  expect(r.error).not.toContain("::1");
  expect(r.error).toContain("[secret]");
});
