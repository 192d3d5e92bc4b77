// Inbound webhooks: a project's URL (/hooks/<id>) that a service (Stripe, GitHub, Alertmanager, or
// anything sending JSON) posts to, each delivery checked by its kind and made into events.

export const HOOK_KINDS = ["stripe", "github", "alertmanager", "generic"] as const;
export type HookKind = (typeof HOOK_KINDS)[number];

/** A generic hook's settings: where in the JSON each field of the event is, and the header of its HMAC. */
export type GenericConfig = {
  /** The event's fields, each a JSON path into the body ("$.data.title", "data.title"). */
  mapping?: {
    event?: string;
    description?: string;
    icon?: string;
    notify?: string;
    user_id?: string;
    channel?: string;
    id?: string;
    tags?: Record<string, string>;
  };
  /** The header that carries the body's HMAC-SHA256 (hex, optionally "sha256=..."); checked when the hook has a secret. */
  signature_header?: string;
};

export type HookConfig = GenericConfig;

export type Hook = {
  /** Unguessable: the URL's secret part. */
  id: string;
  projectId: number;
  kind: HookKind;
  name: string;
  channel: string;
  /** Verifies deliveries' signatures; never shown again after it is set. */
  secret: string | null;
  config: HookConfig;
  createdAt: number;
};

export type NewHook = Hook;
export type HookChanges = Partial<Pick<Hook, "name" | "channel" | "secret" | "config">>;
