// Signed tokens, portal links and the settings around them, without a server: a token verifies only
// with its own secret and purpose, only before it expires, and not after any change; origins for
// FAIRWAY_PORTAL_ORIGINS must be bare origins; logged paths never carry a token.
import { describe, expect, it } from "vitest";
import { createPortalLink, loggablePath, parsePortalOrigins } from "../src/index.ts";
import { verifyPortalLink, verifyPortalSession, createPortalSession } from "../src/portal-link.ts";
import { signToken, verifyToken } from "../src/signed-token.ts";

const secret = "admin-token-for-tests-0123456789";
const now = 1_800_000_000_000;

describe("signed tokens", () => {
  it("verify with the same secret and purpose before expiry, and never otherwise", async () => {
    const t = await signToken(secret, "p", { exp: now + 1000, t: "acme" });
    expect(await verifyToken(secret, "p", t, now)).toEqual({ ok: true, claims: { exp: now + 1000, t: "acme" } });
    expect(await verifyToken(secret, "p", t, now + 1000)).toEqual({ ok: false, reason: "expired" });
    expect(await verifyToken(`${secret}x`, "p", t, now)).toEqual({ ok: false, reason: "bad_signature" });
    expect(await verifyToken(secret, "other", t, now)).toEqual({ ok: false, reason: "bad_signature" });
    expect(await verifyToken(secret, "p", "not-a-token", now)).toEqual({ ok: false, reason: "malformed" });
  });

  it("refuse every single-character change", async () => {
    const t = await signToken(secret, "p", { exp: now + 1000 });
    for (let i = 0; i < t.length; i++) {
      if (t[i] === ".") continue;
      const changed = t.slice(0, i) + (t[i] === "A" ? "B" : "A") + t.slice(i + 1);
      const v = await verifyToken(secret, "p", changed, now);
      expect(v.ok, `position ${i}`).toBe(false);
    }
  });
});

describe("portal links", () => {
  it("a link is not a session and a session is not a link", async () => {
    const link = await createPortalLink({
      secret,
      origin: "https://fw.example",
      tenantId: "acme",
      epoch: 0,
      ttlSeconds: 900,
      nowMs: now,
    });
    expect(link.url).toMatch(/^https:\/\/fw\.example\/dashboard\/open\/[\w-]+\.[\w-]{43}$/);
    expect(link.expiresAt).toBe(new Date(now + 900_000).toISOString());
    const token = link.url.split("/dashboard/open/")[1];
    expect(await verifyPortalLink(secret, token, now)).toMatchObject({ ok: true, claims: { t: "acme" } });
    expect(await verifyPortalSession(secret, token, now)).toEqual({ ok: false, reason: "bad_signature" });
    const session = await createPortalSession(secret, { tenantId: "acme", epoch: 0 }, now);
    expect(await verifyPortalLink(secret, session, now)).toEqual({ ok: false, reason: "bad_signature" });
  });
});

describe("FAIRWAY_PORTAL_ORIGINS", () => {
  it("takes bare http(s) origins separated by spaces or commas, and refuses anything else", () => {
    expect(parsePortalOrigins(undefined)).toEqual({ ok: true, origins: [] });
    expect(parsePortalOrigins("https://a.example, http://localhost:3000 https://b.example")).toEqual({
      ok: true,
      origins: ["https://a.example", "http://localhost:3000", "https://b.example"],
    });
    for (const bad of [
      "https://a.example/path",
      "a.example",
      "*",
      "'self'",
      "javascript:alert(1)",
      "https://a.example;",
    ]) {
      expect(parsePortalOrigins(bad).ok, bad).toBe(false);
    }
  });
});

it("logged paths carry no token", () => {
  expect(loggablePath("/dashboard/open/abc.def")).toBe("/dashboard/open/[token]");
  expect(loggablePath("/dashboard/portal/abc.def/jobs/job_1")).toBe("/dashboard/portal/[token]/jobs/job_1");
  expect(loggablePath("/dashboard/admin/t/acme/jobs")).toBe("/dashboard/admin/t/acme/jobs");
  expect(loggablePath("/v1/jobs/job_01M8SSJ306TYC7C2N7PXGPXHDS/triggers")).toBe(
    "/v1/jobs/job_01M8SSJ306TYC7C2N7PXGPXHDS/triggers",
  );
});

it("a token split by hand or an admin token pasted into a path is not logged either", () => {
  const mac = "Qk9Hd3Vz1M2bQ8kR3n0pT5xYzA7cE9fG1hJ2kL3mN4o"; // 43 base64url characters, as a MAC is
  expect(loggablePath(`/dashboard/open/eyJ0Ijoiam9iIn0/${mac}`)).toBe("/dashboard/open/[token]/[token]");
  expect(loggablePath(`/v1/jobs/${mac}`)).toBe("/v1/jobs/[token]");
  expect(loggablePath("/v1/jobs/fwadmin_test_k3j4h5g6f7d8")).toBe("/v1/jobs/[token]");
  expect(loggablePath("/v1/admin/tenants/fwadmin_0123456789abcdef/keys")).toBe("/v1/admin/tenants/[token]/keys");
});
