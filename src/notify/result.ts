// What one attempt at sending came to, whatever the receiver: delivered, or refused with whether a
// retry may succeed (and when), and whether the receiver is gone for good.
export type SendResult =
  | { ok: true; status: number }
  | { ok: false; status: number | null; error: string; retry: boolean; retryAfterMs?: number; gone?: boolean };
