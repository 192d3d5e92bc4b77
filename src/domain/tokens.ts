// API tokens: random, shown once, stored as a SHA-256 hash (tokens carry 238 bits of entropy, so a
// fast hash is the right tool; passwords are another matter). Revocation takes effect at the next
// request because every request reads the token row; "last used" is buffered in memory and written
// in the background, so authentication never costs a write.
import { timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { Conflict, NotFound } from "../errors.ts";
import type { Store } from "../store/store.ts";
import { type Actor, COMMAND_LINE } from "../model/audit.ts";
import type { Credential } from "../model/credential.ts";
import type { Scope } from "../model/access.ts";
import type { User } from "../model/user.ts";
import { reaches, within } from "./access.ts";
import { projectIdsOf } from "./projects.ts";
import { audited, tokenSubject } from "./audit.ts";
import { channelName, projectName } from "./input-fields.ts";
import { validate } from "./validation.ts";
import type { TokenRecord } from "../model/token.ts";
import type { Token } from "../model/token.ts";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SECRET_LENGTH = 40;
const PREFIX_LENGTH = "sb_".length + 8;

export const newTokenInput = z
  .object({
    name: z.string().trim().min(1, "is required").max(100, "must be at most 100 characters"),
    kind: z.enum(["full", "public"]).default("full"),
    project: projectName.optional(),
    channel: channelName.optional(),
    mayNotify: z.boolean().default(false),
    /** A full-access token may be limited to some projects. */
    projects: z.array(projectName).min(1, "name at least one project").optional(),
  })
  .superRefine((t, ctx) => {
    if (t.kind === "public" && t.projects)
      ctx.addIssue({ code: "custom", path: ["projects"], message: "a public token has one project: use project" });
    if (t.kind === "public" && !t.project)
      ctx.addIssue({ code: "custom", path: ["project"], message: "a public token must be limited to a project" });
    if (t.kind === "full" && (t.project || t.channel))
      ctx.addIssue({
        code: "custom",
        path: ["kind"],
        message: "only public tokens are limited to a project or channel",
      });
    if (t.kind === "full" && t.mayNotify)
      ctx.addIssue({
        code: "custom",
        path: ["mayNotify"],
        message: "full-access tokens may always notify; the choice is for public tokens",
      });
  });

export type NewTokenInput = z.input<typeof newTokenInput>;

/** Whether a token reaches only projects among `projects` (null: every project), so someone limited to them may see and manage it. */
export function tokenWithin(t: Pick<Token, "kind" | "project" | "projects">, projects: string[] | null): boolean {
  if (projects === null) return true;
  return t.kind === "public" ? t.project !== null && projects.includes(t.project) : within(t.projects, projects);
}

/** Who made a token: a person in the dashboard (whose projects limit it), or the command line. */
export type TokenMaker = Pick<User, "id" | "username" | "projects">;

export function randomToken(): string {
  const out: string[] = [];
  while (out.length < SECRET_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(64))) {
      if (byte < 248 && out.length < SECRET_LENGTH) out.push(ALPHABET[byte % 62]!); // 248 = 4 × 62: no modulo bias
    }
  }
  return "sb_" + out.join("");
}

function sha256(text: string): Buffer {
  return new Bun.CryptoHasher("sha256").update(text).digest() as Buffer;
}

const CACHE_LIMIT = 10_000;

export function tokenService(store: Store) {
  const lastUsed = new Map<number, number>();
  // Scopes of tokens seen recently, so most requests skip the database and the hash. Dropped
  // whenever a token may have changed (store.accessVersion), so a revocation still applies to the
  // very next request, from this process or a CLI command.
  const scopes = new Map<string, Scope & { tokenId: number }>();
  let version = "";
  // The access version each scope was last known good at (see stillValid).
  const checkedAt = new WeakMap<Scope, string>();

  function info({ hash: _hash, ...rest }: TokenRecord): Token {
    return rest;
  }

  return {
    /**
     * `by`: the person creating it, or null from the command line. A token made by someone limited
     * to some projects is limited to them: a full-access one reaches only their projects, a public
     * one must be for one of them. Two live tokens never share a name (`token revoke NAME` must
     * name one).
     */
    async create(
      input: NewTokenInput,
      by: TokenMaker | null = null,
      actor: Actor = by ? { userId: by.id, name: by.username, ip: null } : COMMAND_LINE,
      now = Date.now(),
    ): Promise<{ token: string; info: Token }> {
      const t = validate(newTokenInput, input);
      const mine = by?.projects ?? null;
      if (t.project && !reaches(mine, t.project)) throw new NotFound(`Project "${t.project}" does not exist.`);
      const project = t.project ? await store.projects.findByName(t.project) : null;
      if (t.project && !project)
        throw new NotFound(
          `Project "${t.project}" does not exist. Create it first: signalboard project create ${t.project}`,
        );
      const limits = t.kind === "full" ? (t.projects ?? mine) : null;
      if (limits && mine && !within(limits, mine))
        throw new NotFound(`A project of ${limits.join(", ")} does not exist.`);
      for (let attempt = 0; attempt < 5; attempt++) {
        const token = randomToken();
        const prefix = token.slice(0, PREFIX_LENGTH);
        if (await store.tokens.findByPrefix(prefix)) continue;
        const row = await audited(
          store,
          actor,
          async (tx, note) => {
            if (await tx.tokens.activeNamed(t.name))
              throw new Conflict(
                `A token named "${t.name}" already exists. Choose another name (each token's name must be unique until it is revoked), or revoke that one first.`,
              );
            const created = await tx.tokens.insert({
              name: t.name,
              kind: t.kind,
              projectId: project?.id ?? null,
              channel: t.channel ?? null,
              prefix,
              hash: sha256(token).toString("hex"),
              mayNotify: t.kind === "public" && t.mayNotify,
              createdBy: by?.username ?? null,
              createdByUserId: by?.id ?? null,
              createdAt: now,
              projectIds: limits ? await projectIdsOf(tx, limits) : null,
            });
            note("token.created", tokenSubject(created), describe(created));
            return created;
          },
          now,
        );
        return { token, info: info(row) };
      }
      throw new Conflict("Could not allocate a unique token prefix; try again.");
    },

    async list(): Promise<Token[]> {
      return (await store.tokens.list()).map((row) =>
        info({ ...row, lastUsedAt: lastUsed.get(row.id) ?? row.lastUsedAt }),
      );
    },

    /** Revoke by id, prefix or exact name; `reach`: the projects of the person revoking it (null: every project). */
    async revoke(
      ref: string,
      actor: Actor = COMMAND_LINE,
      reach: string[] | null = null,
      now = Date.now(),
    ): Promise<Token> {
      const row = await find(ref, reach);
      const revoked = await audited(
        store,
        actor,
        async (tx, note) => {
          if (!(await tx.tokens.revoke(row.id, now))) return false;
          note("token.revoked", tokenSubject(row), describe(row));
          return true;
        },
        now,
      );
      if (!revoked) throw new NotFound(`Token ${row.prefix} ("${row.name}") is already revoked.`);
      lastUsed.delete(row.id);
      return info({ ...row, revokedAt: now });
    },

    /**
     * Whether the token behind `scope` still grants it: cheap while nothing that can revoke access
     * has happened since it was checked; else the token is read again. For a request that waited
     * (for a slow body, say) between authenticating and acting.
     */
    async stillValid(scope: Scope): Promise<boolean> {
      if (scope.tokenId === null) return true;
      const current = store.accessVersion();
      if (checkedAt.get(scope) === current) return true;
      const row = await store.tokens.findById(scope.tokenId);
      const valid = row !== null && row.revokedAt === null;
      if (valid) checkedAt.set(scope, current);
      return valid;
    },

    /** Allows or stops a public token's events that notify. */
    async setMayNotify(ref: string, mayNotify: boolean, reach: string[] | null = null): Promise<Token> {
      const row = await find(ref, reach);
      if (row.kind !== "public")
        throw new Conflict(`Token ${row.prefix} ("${row.name}") has full access: it may always notify.`);
      if (row.revokedAt !== null) throw new NotFound(`Token ${row.prefix} ("${row.name}") is revoked.`);
      await store.tokens.setMayNotify(row.id, mayNotify);
      return info({ ...row, mayNotify });
    },

    /** The scope a bearer token grants, or a reason it grants none. */
    async authenticate(token: string, now = Date.now()): Promise<Scope | "unknown" | "revoked"> {
      const current = store.accessVersion();
      if (current !== version) {
        scopes.clear();
        version = current;
      }
      const known = scopes.get(token);
      if (known) {
        lastUsed.set(known.tokenId, now);
        return known;
      }
      const row =
        token.startsWith("sb_") && token.length === 3 + SECRET_LENGTH
          ? await store.tokens.findByPrefix(token.slice(0, PREFIX_LENGTH))
          : null;
      if (!row || !timingSafeEqual(sha256(token), Buffer.from(row.hash, "hex"))) return "unknown";
      if (row.revokedAt !== null) return "revoked";
      lastUsed.set(row.id, now);
      const scope: Scope & { tokenId: number } =
        row.kind === "full"
          ? { kind: "full", tokenId: row.id, name: row.name, projects: row.projects }
          : {
              kind: "public",
              tokenId: row.id,
              name: row.name,
              projectId: row.projectId!,
              project: row.project!,
              channel: row.channel,
              mayNotify: row.mayNotify,
            };
      if (scopes.size >= CACHE_LIMIT) scopes.clear();
      scopes.set(token, scope);
      checkedAt.set(scope, current);
      return scope;
    },

    /**
     * What keeps a stream opened with this scope open: its token, not revoked, and still reaching
     * what the stream shows: `project`, or every project (null). A token narrowed later (its maker
     * limited to fewer projects) ends its streams of the projects it lost.
     */
    credential(scope: Scope, project: string | null): Credential | undefined {
      if (scope.tokenId === null) return undefined;
      const id = scope.tokenId;
      const shown = project === null ? null : [project];
      return {
        key: `token:${id}:${project ?? "*"}`,
        valid: async () => {
          const row = await store.tokens.findById(id);
          return row !== null && row.revokedAt === null && within(shown, row.projects);
        },
      };
    },

    /** Writes buffered last-used times; the server calls this every few seconds and at shutdown. */
    async flushLastUsed(): Promise<void> {
      if (lastUsed.size === 0) return;
      const pending = [...lastUsed];
      lastUsed.clear();
      await store.tx(async (tx) => {
        for (const [id, at] of pending) await tx.tokens.touch(id, at);
      });
    },
  };

  /** The token `ref` names, among those within `reach`. */
  async function find(ref: string, reach: string[] | null = null): Promise<TokenRecord> {
    const all = (await store.tokens.list(true)).filter((t) => tokenWithin(t, reach));
    const byId = /^\d+$/.test(ref) ? all.filter((t) => t.id === Number(ref)) : [];
    const matches = byId.length
      ? byId
      : all.filter((t) => t.prefix === ref || ref.startsWith(t.prefix) || t.name === ref);
    const active = matches.filter((t) => t.revokedAt === null);
    const candidates = active.length ? active : matches;
    if (candidates.length === 0)
      throw new NotFound(`No token matches "${ref}". List them with: signalboard token list`);
    if (candidates.length > 1)
      throw new Conflict(
        `"${ref}" matches ${candidates.length} tokens; use the id or prefix from: signalboard token list`,
      );
    return candidates[0]!;
  }
}

export type TokenService = ReturnType<typeof tokenService>;

/** What a token may do, for the trail. */
function describe(t: Pick<Token, "kind" | "project" | "projects" | "channel" | "mayNotify">): string {
  if (t.kind === "public")
    return `public, ${t.project}${t.channel ? `/${t.channel}` : ""}${t.mayNotify ? ", may notify" : ""}`;
  return t.projects ? `full access to ${t.projects.join(", ") || "no project"}` : "full access";
}
