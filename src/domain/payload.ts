import type { EventJson } from "./event-json.ts";

/**
 * A delivery's message. For an integration, title and body are in its kind's format (templates.ts:
 * `html` for e-mail, Telegram and Matrix, `json` for a webhook's templated body); `to` holds a
 * digest's e-mail recipients.
 */
export type Payload = {
  title: string;
  body: string;
  url: string;
  tag: string;
  icon: string | null;
  event: EventJson | null;
  priority: number;
  test?: boolean;
  digest?: boolean;
  html?: string;
  json?: string;
  to?: string[];
};
