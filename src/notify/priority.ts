// An event's priority (1 min, 3 default, 5 urgent) as Web Push's Urgency header (RFC 8030), which
// lets a phone on battery saver hold a low one back. Each integration kind maps priorities in its
// own module (domain/integration-kinds/).
import { level } from "../domain/integration-kinds/kind.ts";

export const pushUrgency = (p: number) => level(["very-low", "low", "normal", "high", "high"] as const, p);
