// Push devices as the operator sees them from the shell: every user's, by id, so one that misbehaves
// can be removed without its owner. The endpoint stays inside: its URL is a capability (whoever has
// it, with the keys, can push to the device), so only the push service's host is shown.
import { NotFound } from "../errors.ts";
import type { Store } from "../store/store.ts";
import type { Subscription } from "../model/notification.ts";

export type DeviceSummary = Pick<
  Subscription,
  "id" | "deviceName" | "createdAt" | "lastSuccessAt" | "lastError" | "lastErrorAt"
> & {
  username: string;
  pushService: string;
};

function summary(d: Subscription & { username: string }): DeviceSummary {
  return {
    id: d.id,
    username: d.username,
    deviceName: d.deviceName,
    pushService: new URL(d.endpoint).host,
    createdAt: d.createdAt,
    lastSuccessAt: d.lastSuccessAt,
    lastError: d.lastError,
    lastErrorAt: d.lastErrorAt,
  };
}

export function deviceAdmin(store: Store) {
  return {
    async list(): Promise<DeviceSummary[]> {
      return (await store.notifications.subscriptionsWithOwner()).map(summary);
    },

    /** Deletes the device; what is still queued for it is dropped when its turn comes (the device was removed). */
    async remove(id: number): Promise<DeviceSummary> {
      const removed = await store.tx(async (tx) => {
        const [device] = await tx.notifications.subscriptionsWithOwner(id);
        if (device) await tx.notifications.deleteSubscription(id);
        return device ?? null;
      });
      if (!removed) throw new NotFound(`There is no device ${id}: signalboard device list shows their ids.`);
      return summary(removed);
    },
  };
}
