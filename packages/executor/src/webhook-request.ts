// What one webhook delivery sends: method, URL, headers and body, and the same request as the attempt
// history keeps it (secrets as their `${secrets.NAME}` placeholders, body truncated). The signature
// covers exactly the bytes sent: the body, or nothing at all for GET and HEAD.
import { substituteInJson, substituteSecrets, type HttpMethod } from "@fairway/core";
import type { ClaimedTrigger } from "@fairway/store";

/** Request bodies kept in the attempt history. */
const RECORDED_BODY_BYTES = 8192;

const BODYLESS = new Set(["GET", "HEAD"]);

export function methodOf(t: ClaimedTrigger): HttpMethod {
  return (t.target?.method ?? "POST") as HttpMethod;
}

/** The body as it will be sent (`values` substituted) and as it is recorded (placeholders), with the
 *  content type it goes with; null for GET and HEAD. */
export function bodyOf(
  t: ClaimedTrigger,
  values: ReadonlyMap<string, string> | null,
): { sent: string; recorded: string; contentType: string } | null {
  const target = t.target!;
  if (BODYLESS.has(methodOf(t))) return null;
  const body = target.body;
  if (body === undefined) {
    const envelope = JSON.stringify({
      id: t.id,
      jobId: t.jobId,
      jobName: t.jobName,
      scheduledFor: t.scheduledFor.toISOString(), // what JSON.stringify makes of the Date, without its toJSON lookup
      attempt: t.attempt,
      payload: t.payload ?? null,
      // Only a job with tags: the envelope of one without stays as it was.
      ...(t.tags ? { tags: t.tags } : {}),
    });
    return { sent: envelope, recorded: envelope, contentType: "application/json" };
  }
  if (typeof body === "string") {
    return {
      sent: values ? substituteSecrets(body, values) : body,
      recorded: body,
      contentType: "text/plain; charset=utf-8",
    };
  }
  const recorded = JSON.stringify(body);
  return {
    sent: values ? JSON.stringify(substituteInJson(body, values)) : recorded,
    recorded,
    contentType: "application/json",
  };
}

/** The target's own headers, values substituted; and whether one of them is content-type. */
export function userHeaders(
  t: ClaimedTrigger,
  values: ReadonlyMap<string, string> | null,
): { headers: Record<string, string>; contentType: boolean } {
  const own = t.target!.headers;
  if (!own) return { headers: {}, contentType: false };
  const headers: Record<string, string> = {};
  let contentType = false;
  for (const [k, v] of Object.entries(own)) {
    headers[k] = values ? substituteSecrets(v, values) : v;
    if (k.length === 12 && k.toLowerCase() === "content-type") contentType = true;
  }
  return { headers, contentType };
}

export function truncateRecorded(
  text: string | null,
  max = RECORDED_BODY_BYTES,
): { body: string | null; truncated: boolean } {
  if (text === null || text.length <= max / 4) return { body: text, truncated: false };
  const bytes = new TextEncoder().encode(text);
  if (bytes.byteLength <= max) return { body: text, truncated: false };
  // A cut inside a UTF-8 sequence decodes to U+FFFD; nothing is lost that was not cut anyway.
  return { body: new TextDecoder().decode(bytes.subarray(0, max)), truncated: true };
}
