// Email through an HTTP mail API, for the Worker (which opens no SMTP connections) and for a Node server
// without SMTP: Resend's `POST {url}/emails` with `Authorization: Bearer <key>` and a JSON
// `{from, to, subject, text}`, the request Resend and the relays that copy its API take. A non-2xx
// answer throws (the notification is retried); the key is never part of an error.
import type { Mailer } from "./notify.ts";

export interface HttpMailApi {
  /** The API's base URL, e.g. https://api.resend.com. */
  url: string;
  apiKey: string;
  /** The From address (a sender the API lets this key use). */
  from: string;
}

export function createHttpMailer(api: HttpMailApi): Mailer {
  const endpoint = `${api.url.replace(/\/+$/, "")}/emails`;
  return async (msg, signal) => {
    const res = await fetch(endpoint, {
      method: "POST",
      headers: { authorization: `Bearer ${api.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ from: api.from, to: [msg.to], subject: msg.subject, text: msg.text }),
      signal,
    });
    const answer = await res.text();
    if (!res.ok) throw new Error(`the mail API answered ${res.status}: ${answer.slice(0, 300)}`);
  };
}
