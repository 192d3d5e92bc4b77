// Signalboard's service worker: shows push notifications, even with no tab open, and opens the
// dashboard at the event when one is tapped. Served at /sw.js so its scope is the whole site.
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  let data;
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = { title: "Signalboard", body: event.data ? event.data.text() : "" };
  }
  event.waitUntil(
    self.registration.showNotification(data.title || "Signalboard", {
      body: data.body || "",
      icon: "/icon-192.png",
      badge: "/icon-192.png",
      tag: data.tag,
      timestamp: Date.now(),
      data: { url: data.url || "/" },
    }),
  );
});

// The link is built from BASE_URL; if the dashboard is opened under another address, keep the
// path and stay on this one.
function target(url) {
  const parsed = new URL(url, self.location.origin);
  return parsed.origin === self.location.origin
    ? parsed.href
    : new URL(parsed.pathname + parsed.search, self.location.origin).href;
}

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = target((event.notification.data && event.notification.data.url) || "/");
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      const same = windows.find((w) => w.url === url);
      if (same) return same.focus();
      const any = windows.find((w) => "navigate" in w);
      if (any) {
        await any.navigate(url);
        return any.focus();
      }
      return self.clients.openWindow(url);
    })(),
  );
});
