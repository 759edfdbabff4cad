// Cross-checked against the official Standard Webhooks implementation, both directions; verified with
// the SDK's verifyWebhook, what receivers use.
import { Webhook } from "standardwebhooks";
import { describe, expect, test } from "vitest";
import { verifyWebhook, WebhookVerificationError } from "@fairway/sdk/webhooks";
import { generateSigningSecret, signWebhook, signWebhookSync } from "../src/signing.ts";

const now = () => Math.floor(Date.now() / 1000);
const body = JSON.stringify({ job: "daily-report", n: 1, text: "héllo ✓" });

async function signed(secrets: string[], id = "trg_01", ts = now()) {
  const sig = await signWebhook({ secrets, id, timestampSec: ts, body });
  return { "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": sig };
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "resolved";
  } catch (e) {
    expect(e).toBeInstanceOf(WebhookVerificationError);
    return (e as WebhookVerificationError).code;
  }
}

describe("generateSigningSecret", () => {
  test("whsec_ + base64 of 32 bytes, unique", () => {
    const s = generateSigningSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(atob(s.slice(6))).toHaveLength(32);
    expect(generateSigningSecret()).not.toBe(s);
  });
});

describe("interop with the standardwebhooks package", () => {
  test("the official verifier accepts our signature", async () => {
    const secret = generateSigningSecret();
    const headers = await signed([secret]);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  test("the synchronous signer (node:crypto) gives the same header, which the official verifier accepts", async () => {
    const [a, b] = [generateSigningSecret(), generateSigningSecret()];
    const ts = now();
    for (const secrets of [[a], [a, b]]) {
      const sig = signWebhookSync({ secrets, id: "trg_02", timestampSec: ts, body });
      expect(sig).toBe(await signWebhook({ secrets, id: "trg_02", timestampSec: ts, body }));
      expect(sig!.split(" ")).toHaveLength(secrets.length);
      const headers = { "webhook-id": "trg_02", "webhook-timestamp": String(ts), "webhook-signature": sig! };
      for (const s of secrets) expect(new Webhook(s).verify(body, headers)).toEqual(JSON.parse(body));
    }
  });

  test("we verify the official signer's output", async () => {
    const secret = generateSigningSecret();
    const ts = new Date();
    const sig = new Webhook(secret).sign("msg_1", ts, body);
    const headers = {
      "Webhook-Id": "msg_1",
      "Webhook-Timestamp": String(Math.floor(ts.getTime() / 1000)),
      "Webhook-Signature": sig,
    };
    expect(await verifyWebhook({ secret, headers, body })).toEqual({
      id: "msg_1",
      timestampSec: Math.floor(ts.getTime() / 1000),
    });
  });

  test("rotation: two signatures, the official verifier accepts with either secret", async () => {
    const [oldS, newS] = [generateSigningSecret(), generateSigningSecret()];
    const headers = await signed([oldS, newS]);
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(new Webhook(oldS).verify(body, headers)).toBeTruthy();
    expect(new Webhook(newS).verify(body, headers)).toBeTruthy();
    expect(() => new Webhook(generateSigningSecret()).verify(body, headers)).toThrow();
    // and we accept when the receiver knows either or both
    expect(await code(verifyWebhook({ secret: newS, headers, body }))).toBe("resolved");
    expect(await code(verifyWebhook({ secret: [generateSigningSecret(), oldS], headers, body }))).toBe("resolved");
  });

  test("we accept a rotated header built by the official signer", async () => {
    const [a, b] = [generateSigningSecret(), generateSigningSecret()];
    const ts = new Date();
    const sig = `${new Webhook(a).sign("msg_2", ts, body)} ${new Webhook(b).sign("msg_2", ts, body)}`;
    const headers = new Headers({
      "webhook-id": "msg_2",
      "webhook-timestamp": String(Math.floor(ts.getTime() / 1000)),
      "webhook-signature": sig,
    });
    expect(await code(verifyWebhook({ secret: b, headers, body }))).toBe("resolved");
  });
});

describe("verifyWebhook failures", () => {
  const secret = generateSigningSecret();
  test("missing headers", async () => {
    const h = await signed([secret]);
    for (const k of Object.keys(h)) {
      const partial: Record<string, string | undefined> = { ...h, [k]: undefined };
      expect(await code(verifyWebhook({ secret, headers: partial, body }))).toBe("missing_headers");
    }
  });
  test("timestamp outside tolerance either way, or malformed", async () => {
    const old = await signed([secret], "trg_1", now() - 301);
    expect(await code(verifyWebhook({ secret, headers: old, body }))).toBe("timestamp_out_of_tolerance");
    const future = await signed([secret], "trg_1", now() + 301);
    expect(await code(verifyWebhook({ secret, headers: future, body }))).toBe("timestamp_out_of_tolerance");
    expect(await code(verifyWebhook({ secret, headers: old, body, toleranceSec: 600 }))).toBe("resolved");
    const h = await signed([secret], "trg_1", 1_700_000_000);
    expect(await code(verifyWebhook({ secret, headers: h, body, nowSec: 1_700_000_100 }))).toBe("resolved");
    expect(await code(verifyWebhook({ secret, headers: { ...h, "webhook-timestamp": "soon" }, body }))).toBe(
      "timestamp_out_of_tolerance",
    );
  });
  test("tampered body, id, wrong secret, wrong version, garbage signature", async () => {
    const h = await signed([secret]);
    expect(await code(verifyWebhook({ secret, headers: h, body: body + " " }))).toBe("invalid_signature");
    expect(await code(verifyWebhook({ secret, headers: { ...h, "webhook-id": "trg_other" }, body }))).toBe(
      "invalid_signature",
    );
    expect(await code(verifyWebhook({ secret: generateSigningSecret(), headers: h, body }))).toBe("invalid_signature");
    const v2 = h["webhook-signature"].replace("v1,", "v2,");
    expect(await code(verifyWebhook({ secret, headers: { ...h, "webhook-signature": v2 }, body }))).toBe(
      "invalid_signature",
    );
    expect(await code(verifyWebhook({ secret, headers: { ...h, "webhook-signature": "v1,@@@ nonsense" }, body }))).toBe(
      "invalid_signature",
    );
  });
});

test("signing is deterministic for the same inputs (cached key reuse)", async () => {
  const secret = generateSigningSecret();
  const a = await signWebhook({ secrets: [secret], id: "x", timestampSec: 1, body: "b" });
  const b = await signWebhook({ secrets: [secret], id: "x", timestampSec: 1, body: "b" });
  expect(a).toBe(b);
});
