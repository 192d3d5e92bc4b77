// E-mail over SMTP, with nodemailer: the server's mail settings (SIGNALBOARD_SMTP_URL, _FROM), one
// pooled transport. A message is multipart (plain text and sanitised HTML, both with the event's
// link) and its Message-ID is fixed per delivery, so a repeat after a crash can be recognised by
// mail clients and filters. SMTP answers are classified as HTTP ones are: a 4xx reply or a lost
// connection is retried, a 5xx reply (a recipient refused, authentication failed) is not. The
// connection to the SMTP server is opened through the outbound guard (nodemailer's getSocket hook:
// resolved once, checked, connected to the checked address); nodemailer then speaks SMTP over it
// and, for smtps:// or STARTTLS, verifies the server's certificate for the name in the URL.
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport/index.js";
import { emailPriority } from "../domain/integration-kinds/email.ts";
import type { Payload } from "../domain/payload.ts";
import { hostOf, type OutboundRules } from "../domain/outbound.ts";
import { mailParts } from "../domain/templates.ts";
import type { Delivery } from "../model/notification.ts";
import { DestinationRefused, outboundSocket, Unresolved } from "./outbound.ts";
import type { SendResult } from "./result.ts";

const TIMEOUT_MS = 10_000;

export type Mail = { to: string[]; payload: Payload; delivery: Pick<Delivery, "id" | "createdAt"> };

export type Mailer = { send(mail: Mail): Promise<SendResult>; close(): void };

/** Null when no SMTP server is configured: e-mail deliveries then fail, saying so. */
export function createMailer(smtpUrl: string | undefined, from: string, rules: OutboundRules): Mailer | null {
  if (!smtpUrl) return null;
  const host = hostOf(smtpUrl);
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
    getSocket(options, callback) {
      const port = Number(options.port) || (options.secure ? 465 : 587);
      outboundSocket(rules, host, port, AbortSignal.timeout(TIMEOUT_MS)).then(
        (connection) => callback(null, { connection }),
        (error: Error) => callback(error, undefined),
      );
    },
  } as SMTPTransport.Options);
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? "signalboard.invalid";
  return {
    async send({ to, payload: p, delivery }) {
      try {
        await transport.sendMail({
          from,
          to,
          subject: p.title,
          ...mailParts(p),
          messageId: `<delivery-${delivery.id}.${delivery.createdAt.toString(36)}@${domain}>`,
          priority: emailPriority(p.priority ?? 3),
          headers: { "X-Signalboard-Delivery": String(delivery.id) },
        });
        return { ok: true, status: 250 };
      } catch (error) {
        return smtpFailure(error as Parameters<typeof smtpFailure>[0]);
      }
    },
    close: () => transport.close(),
  };
}

/**
 * What an SMTP failure says (its reply code and nodemailer's error code, with the socket's own
 * where there is one, such as a certificate for another name; never the password of the URL).
 */
function smtpFailure(error: Error & { responseCode?: number; code?: string; originalCode?: string }): SendResult {
  if (error instanceof DestinationRefused) return { ok: false, status: null, retry: false, error: error.message };
  if (error instanceof Unresolved) return { ok: false, status: null, retry: true, error: error.message };
  const code = error.responseCode;
  if (typeof code === "number")
    return { ok: false, status: code, retry: code < 500, error: `SMTP ${code}${error.code ? ` (${error.code})` : ""}` };
  const timedOut = error.code === "ETIMEDOUT" || error.name === "TimeoutError";
  const refused = error.code === "EAUTH" || error.code === "EENVELOPE";
  return {
    ok: false,
    status: null,
    retry: !refused,
    error: timedOut
      ? `the SMTP server did not answer within ${TIMEOUT_MS / 1000} s`
      : `could not send over SMTP (${error.code ?? error.name}${error.originalCode ? `: ${error.originalCode}` : ""})`,
  };
}
