// Dashboard accounts and their sessions.

/**
 * What a person may do, from most to least: the owner (everything, and alone assigns roles and
 * project limits), admins (members, tokens, integrations, settings), members (change projects and
 * channels, charts, dashboards, alert rules, retention) and viewers (read only).
 */
export type Role = "owner" | "admin" | "member" | "viewer";

/** The roles someone is given: an instance's owner is made, not given (at setup, or `user create --owner`). */
export const GIVEN_ROLES: readonly Role[] = ["admin", "member", "viewer"];

/** `projects`: the names of the projects a user is limited to, sorted; null when they may see every project. */
export type User = {
  id: number;
  username: string;
  role: Role;
  projects: string[] | null;
  createdAt: number;
  updatedAt: number;
};

/** A user with their password hash, for checking a sign-in only. */
export type UserRecord = User & { passwordHash: string };

/** A live sign-in: its id, CSRF token and expiry (Unix ms), and whose it is. */
export type Session = { sessionId: number; csrfToken: string; expiresAt: number; user: User };
