// Web Push: the service worker, this device's subscription, and the requests about it.

/** The session's CSRF token, which the layout gives htmx in the body's hx-headers (none before sign-in). */
export function csrfToken(): string {
  try {
    return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRF-Token"] || "";
  } catch {
    return "";
  }
}

export function postJson(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
    body: JSON.stringify(body),
  });
}

export const pushSupported = (): boolean =>
  "serviceWorker" in navigator && "PushManager" in window && "Notification" in window && window.isSecureContext;

export function base64urlToBytes(text: string): Uint8Array<ArrayBuffer> {
  const pad = "=".repeat((4 - (text.length % 4)) % 4);
  const raw = atob((text + pad).replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

export function defaultDeviceName(): string {
  const ua = navigator.userAgent;
  const os = /iPhone/.test(ua)
    ? "iPhone"
    : /iPad/.test(ua)
      ? "iPad"
      : /Android/.test(ua)
        ? "Android"
        : /Mac OS X/.test(ua)
          ? "Mac"
          : /Windows/.test(ua)
            ? "Windows"
            : /Linux/.test(ua)
              ? "Linux"
              : "Device";
  const browser = /Edg\//.test(ua)
    ? "Edge"
    : /Firefox\//.test(ua)
      ? "Firefox"
      : /Chrome\//.test(ua)
        ? "Chrome"
        : /Safari\//.test(ua)
          ? "Safari"
          : "browser";
  return os + " · " + browser;
}

/**
 * Every signed-in page registers the service worker (which makes the dashboard installable) and,
 * where push is on, tells the server this device is still here, which keeps its subscription alive.
 */
export function keepDeviceRegistered(): void {
  document.addEventListener("DOMContentLoaded", async () => {
    if (!("serviceWorker" in navigator) || !csrfToken()) return;
    try {
      const registration = await navigator.serviceWorker.register("/sw.js");
      if (!pushSupported() || Notification.permission !== "granted") return;
      const subscription = await registration.pushManager.getSubscription();
      if (subscription) await postJson("/settings/notifications/devices/refresh", { endpoint: subscription.endpoint });
    } catch {
      // no service worker here (plain http on a LAN address, a private window): the dashboard works without
    }
  });
}
