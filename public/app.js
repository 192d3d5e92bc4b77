// Signalboard's dashboard behaviour. Alpine's CSP build evaluates no expressions, so every
// component is registered here and templates only name its properties and methods.
"use strict";

(function () {
  const RECONNECT_MAX_MS = 30000;

  function fragment(markup) {
    const template = document.createElement("template");
    template.innerHTML = markup.trim();
    return template.content.firstElementChild;
  }

  // --- relative times: "3 min ago", absolute local time on hover ---------------------------------

  function relative(ms, now) {
    const s = Math.round((now - ms) / 1000);
    const abs = Math.abs(s);
    if (abs < 45) return "just now";
    let value, unit;
    if (abs < 3600) [value, unit] = [Math.round(abs / 60), "min"];
    else if (abs < 86400) [value, unit] = [Math.round(abs / 3600), "h"];
    else if (abs < 86400 * 45) [value, unit] = [Math.round(abs / 86400), "d"];
    else return new Date(ms).toLocaleDateString();
    return s >= 0 ? value + " " + unit + " ago" : "in " + value + " " + unit;
  }

  function refreshTimes(root) {
    const now = Date.now();
    for (const el of (root || document).querySelectorAll("time[data-relative]")) {
      const ms = Date.parse(el.getAttribute("datetime"));
      if (Number.isNaN(ms)) continue;
      el.textContent = relative(ms, now);
      if (!el.dataset.local) {
        el.title = new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
        el.dataset.local = "1";
      }
    }
  }

  document.addEventListener("DOMContentLoaded", () => refreshTimes());
  document.addEventListener("htmx:afterSettle", (e) => refreshTimes(e.target));
  setInterval(() => refreshTimes(), 30000);

  // --- toasts --------------------------------------------------------------------------------------

  function toast(text, kind, href) {
    const box = document.getElementById("toasts");
    if (!box) return;
    const item = document.createElement("div");
    item.className = "toast" + (kind ? " " + kind : "");
    if (href) {
      const link = document.createElement("a");
      link.href = href;
      link.textContent = text;
      item.appendChild(link);
    } else {
      item.textContent = text;
    }
    box.appendChild(item);
    setTimeout(() => item.remove(), 6000);
  }
  window.signalboardToast = toast;

  // An htmx request the server refused: show its message rather than failing silently.
  document.addEventListener("htmx:responseError", (e) => {
    const xhr = e.detail.xhr;
    toast((xhr && xhr.responseText) || "The request failed.", "error");
  });
  document.addEventListener("htmx:sendError", () => toast("Cannot reach the server. Check your connection.", "error"));

  // --- Web Push -----------------------------------------------------------------------------------

  function csrfToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRF-Token"] || "";
    } catch {
      return "";
    }
  }

  function postJson(url, body) {
    return fetch(url, { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() }, body: JSON.stringify(body) });
  }

  const pushSupported = () => "serviceWorker" in navigator && "PushManager" in window && "Notification" in window && window.isSecureContext;

  function base64urlToBytes(text) {
    const pad = "=".repeat((4 - (text.length % 4)) % 4);
    const raw = atob((text + pad).replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0));
  }

  function defaultDeviceName() {
    const ua = navigator.userAgent;
    const os = /iPhone/.test(ua) ? "iPhone" : /iPad/.test(ua) ? "iPad" : /Android/.test(ua) ? "Android" : /Mac OS X/.test(ua) ? "Mac" : /Windows/.test(ua) ? "Windows" : /Linux/.test(ua) ? "Linux" : "Device";
    const browser = /Edg\//.test(ua) ? "Edge" : /Firefox\//.test(ua) ? "Firefox" : /Chrome\//.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : "browser";
    return os + " · " + browser;
  }

  // Every signed-in page registers the service worker (which makes the dashboard installable) and,
  // where push is on, tells the server this device is still here, which keeps its subscription alive.
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

  // --- charts (uPlot) ------------------------------------------------------------------------------

  const PALETTE = ["#4f46e5", "#0ea5e9", "#10b981", "#f59e0b", "#ef4444", "#a855f7", "#14b8a6", "#f97316", "#64748b", "#ec4899"];

  function chartTheme() {
    const style = getComputedStyle(document.documentElement);
    return { text: style.getPropertyValue("--muted").trim(), grid: style.getPropertyValue("--border").trim() };
  }

  function axes() {
    const t = chartTheme();
    return [
      { stroke: t.text, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid } },
      { stroke: t.text, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid }, size: 50 },
    ];
  }

  function drawChart(el, opts, data) {
    if (!window.uPlot) return null;
    el.textContent = "";
    const width = Math.max(el.clientWidth, 280);
    const chart = new window.uPlot(Object.assign({ width, height: 220, axes: axes() }, opts), data, el);
    const onResize = () => chart.setSize({ width: Math.max(el.clientWidth, 280), height: 220 });
    window.addEventListener("resize", onResize);
    return { chart, dispose: () => { window.removeEventListener("resize", onResize); chart.destroy(); } };
  }

  document.addEventListener("alpine:init", () => {
    const Alpine = window.Alpine;

    // The page shell: the sidebar is a drawer on narrow screens.
    Alpine.data("shell", () => ({
      navOpen: false,
      toggleNav() { this.navOpen = !this.navOpen; },
      closeNav() { this.navOpen = false; },
      shellClass() { return this.navOpen ? "nav-open" : ""; },
      navOpenText() { return this.navOpen ? "true" : "false"; },
    }));

    // The "+" buttons: show a small form and put the cursor in it.
    Alpine.data("toggle", () => ({
      open: false,
      flip() {
        this.open = !this.open;
        if (this.open) this.$nextTick(() => { const input = this.$root.querySelector("input"); if (input) input.focus(); });
      },
    }));

    Alpine.data("filters", () => ({
      more: false,
      init() {
        this.more = !!this.$root.querySelector(".filter-more:not([x-cloak])");
        // Date filters are days where the viewer is: the server needs their offset from UTC.
        this.$refs.tz.value = String(-new Date().getTimezoneOffset());
      },
      toggleMore() { this.more = !this.more; },
      moreText() { return this.more ? "Fewer filters" : "More filters"; },
      // "/" focuses the search box, unless one is already typing somewhere.
      focusSearch(event) {
        event = event || this.$event;
        const tag = (document.activeElement && document.activeElement.tagName) || "";
        if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
        event.preventDefault();
        this.$refs.q.focus();
      },
    }));

    Alpine.data("dialog", () => ({
      init() {
        const dialog = this.$root;
        dialog.showModal();
        dialog.addEventListener("close", () => dialog.remove());
      },
      close() { this.$root.close(); },
    }));

    Alpine.data("copyButton", () => ({
      label: "Copy",
      async copy() {
        const source = this.$refs.source;
        try {
          await navigator.clipboard.writeText(source.value);
          this.label = "Copied";
        } catch {
          source.select();
          document.execCommand("copy");
          this.label = "Copied";
        }
        setTimeout(() => { this.label = "Copy"; }, 2000);
      },
    }));

    // Settings → Notifications: "Enable on this device".
    Alpine.data("pushDevice", () => ({
      state: "checking",
      busy: false,
      error: "",
      async init() {
        if (!pushSupported()) { this.state = "unsupported"; return; }
        if (Notification.permission === "denied") { this.state = "blocked"; return; }
        this.$refs.name.value = defaultDeviceName();
        const registration = await navigator.serviceWorker.register("/sw.js");
        const subscription = await registration.pushManager.getSubscription();
        const listed = subscription && document.querySelector('[data-endpoint="' + CSS.escape(subscription.endpoint) + '"]');
        this.state = listed && Notification.permission === "granted" ? "enabled" : "ready";
      },
      isUnsupported() { return this.state === "unsupported"; },
      isBlocked() { return this.state === "blocked"; },
      isEnabled() { return this.state === "enabled"; },
      canEnable() { return this.state === "ready"; },
      hasError() { return this.error !== ""; },
      async enable() {
        this.busy = true;
        this.error = "";
        try {
          const permission = await Notification.requestPermission();
          if (permission !== "granted") { this.state = permission === "denied" ? "blocked" : "ready"; return; }
          const registration = await navigator.serviceWorker.ready;
          const key = base64urlToBytes(this.$root.dataset.vapidKey);
          let subscription = await registration.pushManager.getSubscription();
          if (subscription) await subscription.unsubscribe(); // it may belong to another server key
          subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
          const json = subscription.toJSON();
          const response = await postJson("/settings/notifications/devices", { endpoint: json.endpoint, keys: json.keys, deviceName: this.$refs.name.value });
          if (!response.ok) throw new Error((await response.json().catch(() => ({}))).message || "The server refused the subscription.");
          location.reload();
        } catch (e) {
          this.error = "Could not enable notifications: " + (e && e.message ? e.message : e);
        } finally {
          this.busy = false;
        }
      },
    }));

    Alpine.data("autoSubmit", () => ({
      submit() { this.$root.requestSubmit ? this.$root.requestSubmit() : this.$root.submit(); },
    }));

    const INTEGRATION_HINTS = {
      webhook: ["URL", "Any https endpoint of yours. Each request is a JSON POST signed with X-Signalboard-Signature: sha256=HMAC-SHA256(secret, body); the secret is shown once."],
      ntfy: ["ntfy server", "The server only, such as https://ntfy.sh or your own; subscribe to the topic in the ntfy app."],
      discord: ["Discord webhook URL", "Server settings → Integrations → Webhooks → New webhook → Copy webhook URL."],
      slack: ["Slack webhook URL", "An Incoming Webhook of a Slack app: https://hooks.slack.com/services/…"],
    };

    Alpine.data("integrationForm", () => ({
      kind: "webhook",
      init() { this.kind = this.$root.dataset.kind || "webhook"; },
      pick(event) { event = event || this.$event; this.kind = event.target.value; },
      isNtfy() { return this.kind === "ntfy"; },
      urlLabel() { return INTEGRATION_HINTS[this.kind][0]; },
      urlHint() { return INTEGRATION_HINTS[this.kind][1]; },
    }));

    Alpine.data("tokenForm", () => ({
      kind: "full",
      init() { const checked = this.$root.querySelector('input[name="kind"]:checked'); this.kind = checked ? checked.value : "full"; },
      pick(event) { event = event || this.$event; this.kind = event.target.value; },
      isPublic() { return this.kind === "public"; },
    }));

    // Events per channel per day.
    Alpine.data("activityChart", () => ({
      days: 30,
      handle: null,
      init() { this.load(); },
      setRange(event) { event = event || this.$event; this.days = Number(event.target.value); this.load(); },
      async load() {
        const url = this.$root.dataset.url + "?days=" + this.days + "&tz=" + -new Date().getTimezoneOffset();
        const response = await fetch(url, { headers: { Accept: "application/json" } });
        if (!response.ok) return;
        const data = await response.json();
        if (this.handle) this.handle.dispose();
        const el = this.$refs.chart;
        if (!data.channels.length) { el.textContent = "No events in this range."; return; }
        const series = [{}].concat(data.channels.map((name, i) => ({ label: "#" + name, stroke: PALETTE[i % PALETTE.length], width: 2, points: { size: 5 } })));
        this.handle = drawChart(el, { series, scales: { x: { time: true } } }, [data.days].concat(data.series));
      },
    }));

    // A metric's history.
    Alpine.data("metricChart", () => ({
      init() {
        const points = JSON.parse(this.$root.dataset.points);
        const series = [{}, { label: this.$root.dataset.title, stroke: PALETTE[0], width: 2, fill: "rgba(79,70,229,0.08)" }];
        drawChart(this.$root, { series, scales: { x: { time: true } } }, [points.map((p) => p[0]), points.map((p) => p[1])]);
      },
    }));

    // The live feed. New events arrive as HTML over SSE. At the top of the page they slide in;
    // scrolled down, a pill counts them instead of moving what you are reading. In a burst the
    // server sends only the newest few and says how many more there were ("skipped"): the pill
    // counts those too, and clicking it loads the feed afresh. After a disconnect (a server
    // restart, a flaky network) it reconnects by itself and the server replays what was missed
    // after the last event id it saw; an event already shown is skipped.
    Alpine.data("liveFeed", () => ({
      lastId: 0,
      pending: [],
      skipped: 0,
      connected: false,
      attempts: 0,
      source: null,
      timer: null,
      init() {
        this.lastId = Number(this.$root.dataset.lastId) || 0;
        this.connect();
        window.addEventListener("beforeunload", () => this.disconnect());
        window.addEventListener("scroll", () => { if (this.atTop() && this.pending.length && !this.skipped) this.showPending(); }, { passive: true });
      },
      destroy() { this.disconnect(); },
      disconnect() {
        clearTimeout(this.timer);
        if (this.source) this.source.close();
        this.source = null;
      },
      connect() {
        const url = new URL(this.$root.dataset.liveUrl, location.href);
        url.searchParams.set("last_event_id", String(this.lastId));
        const source = new EventSource(url);
        this.source = source;
        source.addEventListener("open", () => { this.connected = true; this.attempts = 0; });
        source.addEventListener("feed", (e) => this.onFeed(e));
        source.addEventListener("skipped", (e) => { this.skipped += JSON.parse(e.data).count || 0; });
        source.addEventListener("metric", (e) => this.onMetric(e));
        source.addEventListener("channel", (e) => this.onChannel(e));
        source.addEventListener("toast", (e) => this.onToast(e));
        source.addEventListener("reload", () => location.reload());
        source.addEventListener("error", () => {
          this.connected = false;
          // EventSource retries network errors itself; a refused answer closes it for good.
          if (source.readyState === EventSource.CLOSED) {
            this.disconnect();
            const delay = Math.min(RECONNECT_MAX_MS, 1000 * 2 ** this.attempts++);
            this.timer = setTimeout(() => this.connect(), delay);
          }
        });
      },
      // "At the top" means the top of the feed is on screen, wherever the feed starts on the page.
      atTop() { return this.$root.getBoundingClientRect().top > -100; },
      onFeed(e) {
        const id = Number(e.lastEventId);
        if (id > this.lastId) this.lastId = id;
        const item = fragment(e.data);
        if (!item || document.getElementById(item.id)) return;
        if (this.atTop()) this.insert(item);
        else if (!this.pending.some((p) => p.id === item.id)) this.pending.push(item);
      },
      insert(item) {
        const list = this.$root.querySelector(".events");
        const empty = this.$root.querySelector(".empty");
        if (empty) empty.remove();
        list.prepend(item);
        refreshTimes(item);
        if (window.htmx) window.htmx.process(item);
      },
      hasPending() { return this.pending.length + this.skipped > 0; },
      pendingText() { const n = this.pending.length + this.skipped; return "↑ " + n + " new event" + (n === 1 ? "" : "s"); },
      showPending() {
        // Events the server only counted are not on the page: load the feed as it is now.
        if (this.skipped) { location.reload(); return; }
        const items = this.pending;
        this.pending = [];
        for (const item of items) if (!document.getElementById(item.id)) this.insert(item);
        if (this.$root.getBoundingClientRect().top < 0) this.$root.scrollIntoView({ block: "start" });
      },
      onMetric(e) {
        const widget = fragment(e.data);
        if (!widget) return;
        const existing = document.getElementById(widget.id);
        const grid = document.getElementById("metrics");
        if (existing) existing.replaceWith(widget);
        else if (grid) grid.appendChild(widget);
        refreshTimes(widget);
      },
      onChannel(e) {
        const item = fragment(e.data);
        const list = document.getElementById("channel-list");
        if (item && list && !document.getElementById(item.id)) list.appendChild(item);
      },
      onToast(e) {
        const data = JSON.parse(e.data);
        toast(data.text, "", data.href);
      },
      statusText() { return this.connected ? "Live" : "Reconnecting…"; },
      statusClass() { return this.connected ? "live" : "down"; },
    }));
  });
})();
