// The server's VAPID key pair (RFC 8292): generated at first start, kept in the database, so
// devices subscribed once stay subscribed across restarts and upgrades.
import webpush from "web-push";
import type { Store } from "../store/index.ts";

export type Vapid = { publicKey: string; privateKey: string; subject: string };

export function vapidKeys(store: Store, subject: string): Vapid {
  let publicKey = store.meta.get("vapid.public_key");
  let privateKey = store.meta.get("vapid.private_key");
  if (!publicKey || !privateKey) {
    ({ publicKey, privateKey } = webpush.generateVAPIDKeys());
    store.sqlite.transaction(() => {
      store.meta.set("vapid.public_key", publicKey!);
      store.meta.set("vapid.private_key", privateKey!);
    })();
  }
  return { publicKey, privateKey, subject };
}
