// What a request proved: a full-access token, or a public token limited to one project (and
// optionally one channel), which may or may not send notifications.
export type Scope =
  | { kind: "full"; tokenId: number | null }
  | { kind: "public"; tokenId: number; projectId: number; project: string; channel: string | null; mayNotify: boolean };
