// Dashboard accounts and their sessions.

export type Role = "owner" | "member";

export type User = { id: number; username: string; role: Role; createdAt: number; updatedAt: number };

/** A user with their password hash, for checking a sign-in only. */
export type UserRecord = User & { passwordHash: string };

/** A live sign-in: its id, CSRF token and expiry (Unix ms), and whose it is. */
export type Session = { sessionId: number; csrfToken: string; expiresAt: number; user: User };
