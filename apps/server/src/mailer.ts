// Email notifications on Node: nodemailer over FAIRWAY_SMTP_URL (smtp:// or smtps://, credentials in the
// URL). The executor's notifications handler calls it; a failure throws and the notification retries.
import nodemailer from "nodemailer";
import type { Mailer } from "@fairway/executor";

export function createMailer(smtpUrl: string, from: string): Mailer {
  const transport = nodemailer.createTransport(smtpUrl);
  return async (msg) => {
    await transport.sendMail({ from, to: msg.to, subject: msg.subject, text: msg.text });
  };
}
