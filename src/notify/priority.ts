// An event's priority (1 min, 3 default, 5 urgent) in each receiver's own terms. ntfy has the same
// five levels. Gotify's 0-10: its Android app shows 1-3 quietly, 4-7 with a sound and 8-10 as
// urgent, and 0 not at all (so no event maps there). Pushover's -2..2: -2 lowest (no alert), -1
// quiet, 0 normal, 1 high (past quiet hours), 2 emergency (repeated until acknowledged, so it
// needs retry and expire). Web Push's Urgency header (RFC 8030) lets a phone on battery saver hold
// a low one back. E-mail's X-Priority and Importance (nodemailer's priority); Telegram sends 1 and
// 2 without a sound.

const at = <T>(list: readonly T[], priority: number): T =>
  list[Math.min(5, Math.max(1, Math.round(priority || 3))) - 1]!;

export const ntfyPriority = (p: number) => at([1, 2, 3, 4, 5], p);
export const gotifyPriority = (p: number) => at([1, 3, 5, 8, 10], p);
export const pushoverPriority = (p: number) => at([-2, -1, 0, 1, 2], p);
export const pushUrgency = (p: number) => at(["very-low", "low", "normal", "high", "high"] as const, p);
export const emailPriority = (p: number) => at(["low", "low", "normal", "high", "high"] as const, p);
export const silentOnTelegram = (p: number) => at([true, true, false, false, false], p);

/** Pushover's emergency priority repeats the alert every `retry` seconds until acknowledged or `expire` seconds passed. */
export const PUSHOVER_EMERGENCY = { retry: 60, expire: 3600 } as const;
