// What a request proved: a full-access token (every project, or those it is limited to), or a
// public token limited to one project (and optionally one channel), which may or may not send
// notifications. `name` is the token's, for the audit trail.
export type Scope =
  | { kind: "full"; tokenId: number | null; name?: string; projects?: string[] | null }
  | {
      kind: "public";
      tokenId: number;
      name?: string;
      projectId: number;
      project: string;
      channel: string | null;
      mayNotify: boolean;
    };
