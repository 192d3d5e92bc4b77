// The audit trail: who changed access or data that matters, what, when and from where.

/**
 * Who did something: a person in the dashboard (`userId`), a token through the API, or the
 * command line; `ip` is the client's address as the server sees it (SIGNALBOARD_TRUST_PROXY).
 */
export type Actor = { userId: number | null; name: string; ip: string | null };

/** What a command run on the server's machine does. */
export const COMMAND_LINE: Actor = { userId: null, name: "command line", ip: null };

export type AuditAction =
  | "owner.created"
  | "sign_in.succeeded"
  | "sign_in.failed"
  | "sign_in.link"
  | "password.changed"
  | "token.created"
  | "token.revoked"
  | "member.added"
  | "member.removed"
  | "member.changed"
  | "project.deleted"
  | "project.retention"
  | "integration.created"
  | "integration.changed"
  | "integration.deleted"
  | "alert.created"
  | "alert.changed"
  | "alert.deleted"
  | "check.created"
  | "check.changed"
  | "check.deleted"
  | "check.ping-key"
  | "maintenance.created"
  | "maintenance.deleted"
  | "check.badge-key"
  | "second_factor.enabled"
  | "second_factor.disabled"
  | "second_factor.reset"
  | "second_factor.required"
  | "hook.created"
  | "hook.changed"
  | "hook.deleted"
  | "share.created"
  | "share.revoked";

/** One entry: `subject` names what was acted on ("token “laptop” (sb_1a2b3c4d)"), `detail` says how. */
export type AuditEntry = {
  id: number;
  at: number;
  action: AuditAction;
  actor: string;
  actorUserId: number | null;
  ip: string | null;
  subject: string;
  detail: string | null;
};

export type NewAuditEntry = Omit<AuditEntry, "id">;
