// The audit trail. A change that matters (a sign-in, a token, a member, a deleted project,
// retention, an integration, an alert rule) is written down in the transaction that makes it, so
// there is no change without its entry and no entry without its change, and logged at the info
// level once committed (by the server: a command prints what it did to its own terminal, and
// its entries are in the trail all the same). The newest AUDIT_KEPT entries are kept.
import { log } from "../logger.ts";
import { type Actor, type AuditAction, type AuditEntry, COMMAND_LINE, type NewAuditEntry } from "../model/audit.ts";
import type { Repositories, Store } from "../store/store.ts";

export const AUDIT_KEPT = 10_000;
export const AUDIT_PAGE = 100;

/** Notes an entry of the change under way: written with it, logged after it commits. */
export type Note = (action: AuditAction, subject: string, detail?: string | null) => void;

/**
 * Runs `work` in a transaction of its own with a `note` for its audit entries, which are written
 * in the same transaction and logged once it committed.
 */
export async function audited<T>(
  store: Store,
  actor: Actor,
  work: (tx: Repositories, note: Note) => Promise<T>,
  now = Date.now(),
): Promise<T> {
  let entries: NewAuditEntry[] = [];
  const result = await store.tx(async (tx) => {
    entries = [];
    const value = await work(
      tx,
      (action, subject, detail = null) => void entries.push(entryOf(actor, action, subject, detail, now)),
    );
    for (const entry of entries) await tx.audit.record(entry);
    return value;
  });
  if (actor !== COMMAND_LINE) entries.forEach(logEntry);
  return result;
}

/** One entry with nothing else to write beside it (a sign-in, and how it was made: `method`). */
export async function recordAudit(
  store: Store,
  actor: Actor,
  action: AuditAction,
  subject: string,
  detail: string | null = null,
  now = Date.now(),
  method: string | null = null,
): Promise<void> {
  const entry = { ...entryOf(actor, action, subject, detail, now), method };
  await store.audit.record(entry);
  if (actor !== COMMAND_LINE) logEntry(entry);
}

function entryOf(actor: Actor, action: AuditAction, subject: string, detail: string | null, at: number): NewAuditEntry {
  return { at, action, actor: actor.name, actorUserId: actor.userId, ip: actor.ip, subject, detail, method: null };
}

function logEntry(e: NewAuditEntry): void {
  log.info(`audit: ${e.action}`, {
    actor: e.actor,
    ip: e.ip,
    subject: e.subject,
    ...(e.detail ? { detail: e.detail } : {}),
    ...(e.method ? { method: e.method } : {}),
  });
}

export function auditService(store: Store) {
  return {
    /** Newest first, AUDIT_PAGE at a time; `before`: the id of the last entry of the page before. */
    list(before?: number): Promise<AuditEntry[]> {
      return store.audit.list({ before, limit: AUDIT_PAGE });
    },

    /** Housekeeping: forgets all but the newest AUDIT_KEPT entries. */
    prune(): Promise<number> {
      return store.audit.prune(AUDIT_KEPT);
    },
  };
}

/** How a token is named in the trail: its name and prefix (never the token). */
export const tokenSubject = (t: { name: string; prefix: string }) => `token “${t.name}” (${t.prefix}…)`;
