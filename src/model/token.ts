// API tokens. Only a hash of a token is ever stored; `prefix` identifies it in lists.

export type TokenKind = "full" | "public";

/** A token as lists and checks see it (never its hash). */
export type Token = {
  id: number;
  name: string;
  kind: TokenKind;
  projectId: number | null;
  project: string | null;
  /** A full-access token made by someone limited to some projects reaches only those (names, sorted); null: every project. */
  projects: string[] | null;
  channel: string | null;
  prefix: string;
  mayNotify: boolean;
  createdBy: string | null;
  createdByUserId: number | null;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
};

/** A token with the hash its secret is checked against. */
export type TokenRecord = Token & { hash: string };

/** `projectIds`: the projects a full-access token is limited to; null for every project. */
export type NewToken = Omit<TokenRecord, "id" | "project" | "projects" | "lastUsedAt" | "revokedAt"> & {
  projectIds: number[] | null;
};
