// What gives a long-lived connection (a live stream) the right to stay open: a token or a
// session. `key` names it (connections held by the same credential are checked once), `valid`
// asks whether it still holds, `expiresAt` (Unix ms) ends it on time without asking.
export type Credential = { key: string; valid: () => Promise<boolean>; expiresAt?: number };
