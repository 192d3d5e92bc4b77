// The server's VAPID key pair (RFC 8292): generated at first start, kept in the database, so
// devices subscribed once stay subscribed across restarts and upgrades.
import webpush from "web-push";
import type { Store } from "../store/store.ts";

export type Vapid = { publicKey: string; privateKey: string; subject: string };

/** The stored pair, or a new one stored in one transaction: whoever stores first wins, and everyone uses that pair. */
export async function vapidKeys(store: Store, subject: string): Promise<Vapid> {
  const keys = await store.tx(async (tx) => {
    const publicKey = await tx.meta.get("vapid.public_key");
    const privateKey = await tx.meta.get("vapid.private_key");
    if (publicKey && privateKey) return { publicKey, privateKey };
    const fresh = webpush.generateVAPIDKeys();
    await tx.meta.set("vapid.public_key", fresh.publicKey);
    await tx.meta.set("vapid.private_key", fresh.privateKey);
    return fresh;
  });
  return { ...keys, subject };
}
