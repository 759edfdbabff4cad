// Email notifications on Node: nodemailer over FAIRWAY_SMTP_URL (smtp:// or smtps://, credentials in the
// URL), or the HTTP mail API of FAIRWAY_MAIL_API_URL (the executor's http-mailer.ts, as on the Worker).
// The executor's notifications handler calls it; a failure throws and the notification retries.
import nodemailer from "nodemailer";
import { createHttpMailer, type Mailer } from "@fairway/executor";
import type { Config } from "./config.ts";

/** The mailer the settings describe; undefined when they name none (email channels are refused). */
export function mailerFor(cfg: Config): Mailer | undefined {
  if (cfg.FAIRWAY_SMTP_URL) {
    const transport = nodemailer.createTransport(cfg.FAIRWAY_SMTP_URL);
    return async (msg) => {
      await transport.sendMail({ from: cfg.FAIRWAY_MAIL_FROM, to: msg.to, subject: msg.subject, text: msg.text });
    };
  }
  if (cfg.FAIRWAY_MAIL_API_URL && cfg.FAIRWAY_MAIL_API_KEY)
    return createHttpMailer({
      url: cfg.FAIRWAY_MAIL_API_URL,
      apiKey: cfg.FAIRWAY_MAIL_API_KEY,
      from: cfg.FAIRWAY_MAIL_FROM,
    });
  return undefined;
}
