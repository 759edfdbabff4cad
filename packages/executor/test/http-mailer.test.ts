// The HTTP mail API client against a real HTTP server answering as Resend does: the exact request on
// success, and a refusal thrown with the API's words (so the notification is retried), never the key.
import { createServer } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createHttpMailer } from "../src/http-mailer.ts";

const got: Array<{ method: string; path: string; headers: Record<string, unknown>; body: string }> = [];
let status = 200;
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    got.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body });
    res
      .writeHead(status, { "content-type": "application/json" })
      .end(
        status === 200 ? '{"id":"email_1"}' : '{"name":"validation_error","message":"The from domain is not verified"}',
      );
  });
});
let url = "";
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

it("posts {from, to, subject, text} to /emails with the key as a bearer token", async () => {
  const send = createHttpMailer({ url, apiKey: "re_test_key", from: "fairway@example.test" });
  await send({ to: "ops@example.test", subject: "Fairway: nightly failed", text: "It is dead." });
  expect(got).toHaveLength(1);
  expect(got[0]).toMatchObject({ method: "POST", path: "/emails" });
  expect(got[0].headers).toMatchObject({ authorization: "Bearer re_test_key", "content-type": "application/json" });
  expect(JSON.parse(got[0].body)).toEqual({
    from: "fairway@example.test",
    to: ["ops@example.test"],
    subject: "Fairway: nightly failed",
    text: "It is dead.",
  });
});

it("throws the API's refusal with its status, without the key", async () => {
  status = 422;
  const send = createHttpMailer({ url, apiKey: "re_test_key", from: "fairway@unverified.test" });
  const err = await send({ to: "ops@example.test", subject: "s", text: "t" }).then(
    () => null,
    (e: Error) => e,
  );
  expect(err?.message).toBe(
    'the mail API answered 422: {"name":"validation_error","message":"The from domain is not verified"}',
  );
  expect(err?.message).not.toContain("re_test_key");
});
