import { component, ref } from "../alpine.ts";
import { base64urlToBytes, defaultDeviceName, postJson, pushSupported } from "../push.ts";

/** Settings → Notifications: "Enable on this device". */
export const pushDevice = component(() => ({
  state: "checking" as "checking" | "unsupported" | "blocked" | "enabled" | "ready",
  busy: false,
  error: "",
  async init() {
    if (!pushSupported()) {
      this.state = "unsupported";
      return;
    }
    if (Notification.permission === "denied") {
      this.state = "blocked";
      return;
    }
    ref<HTMLInputElement>(this, "name").value = defaultDeviceName();
    const registration = await navigator.serviceWorker.register("/sw.js");
    const subscription = await registration.pushManager.getSubscription();
    const listed =
      subscription && document.querySelector('[data-endpoint="' + CSS.escape(subscription.endpoint) + '"]');
    this.state = listed && Notification.permission === "granted" ? "enabled" : "ready";
  },
  isUnsupported() {
    return this.state === "unsupported";
  },
  isBlocked() {
    return this.state === "blocked";
  },
  isEnabled() {
    return this.state === "enabled";
  },
  canEnable() {
    return this.state === "ready";
  },
  hasError() {
    return this.error !== "";
  },
  async enable() {
    this.busy = true;
    this.error = "";
    try {
      const permission = await Notification.requestPermission();
      if (permission !== "granted") {
        this.state = permission === "denied" ? "blocked" : "ready";
        return;
      }
      const registration = await navigator.serviceWorker.ready;
      const key = base64urlToBytes(this.$root.dataset.vapidKey ?? "");
      let subscription = await registration.pushManager.getSubscription();
      if (subscription) await subscription.unsubscribe(); // it may belong to another server key
      subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
      const json = subscription.toJSON();
      const response = await postJson("/settings/notifications/devices", {
        endpoint: json.endpoint,
        keys: json.keys,
        deviceName: ref<HTMLInputElement>(this, "name").value,
      });
      if (!response.ok)
        throw new Error((await response.json().catch(() => ({}))).message || "The server refused the subscription.");
      location.reload();
    } catch (e) {
      const message = (e as { message?: unknown } | null)?.message;
      this.error = "Could not enable notifications: " + (message ? message : e);
    } finally {
      this.busy = false;
    }
  },
}));
