import type { StoredEvent } from "../model/event.ts";
// An event as JSON for the outside world (the API, the stream, webhooks): times in Unix seconds,
// the unit clients send; snake_case, like LogSnag.

export function eventJson(e: StoredEvent) {
  return {
    id: e.id,
    project: e.project,
    channel: e.channel,
    event: e.name,
    description: e.description,
    icon: e.icon,
    notify: e.notify,
    parser: e.parser,
    tags: e.tags ?? {},
    user_id: e.userId,
    timestamp: e.ts / 1000,
    received_at: e.receivedAt / 1000,
    historical: e.historical,
    priority: e.priority,
  };
}

export type EventJson = ReturnType<typeof eventJson>;
