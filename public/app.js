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

  // One way to write a date and time on every page (the server writes the same in UTC, in
  // src/web/views/events.ts): a medium date and a long time with its zone, or the date alone.
  const DATE_TIME = { dateStyle: "medium", timeStyle: "long" };
  const DATE = { dateStyle: "medium" };
  const dateTime = (ms) => new Date(ms).toLocaleString(undefined, DATE_TIME);

  function relative(ms, now) {
    const s = Math.round((now - ms) / 1000);
    const abs = Math.abs(s);
    if (abs < 45) return "just now";
    let value, unit;
    if (abs < 3600) [value, unit] = [Math.round(abs / 60), "min"];
    else if (abs < 86400) [value, unit] = [Math.round(abs / 3600), "h"];
    else if (abs < 86400 * 45) [value, unit] = [Math.round(abs / 86400), "d"];
    else return new Date(ms).toLocaleDateString(undefined, DATE);
    return s >= 0 ? value + " " + unit + " ago" : "in " + value + " " + unit;
  }

  function refreshTimes(root) {
    const now = Date.now();
    // Absolute times: the server writes them in UTC; shown in the viewer's time zone.
    for (const el of (root || document).querySelectorAll("time[data-absolute]:not([data-local])")) {
      const ms = Date.parse(el.getAttribute("datetime"));
      if (Number.isNaN(ms)) continue;
      el.textContent = dateTime(ms);
      el.dataset.local = "1";
    }
    for (const el of (root || document).querySelectorAll("time[data-relative]")) {
      const ms = Date.parse(el.getAttribute("datetime"));
      if (Number.isNaN(ms)) continue;
      el.textContent = relative(ms, now);
      if (!el.dataset.local) {
        el.title = dateTime(ms);
        el.dataset.local = "1";
      }
    }
  }

  // --- metric values: whole numbers and words, made smaller where they do not fit ---------------

  // A value that does not fit its card (a long number in a narrow one) gets smaller until it does,
  // down to MIN_VALUE_PX; it is never broken (public/app.css keeps numbers on one line and wraps
  // text only between words). Fitted again when the page's width or a value changes.
  const MIN_VALUE_PX = 9;
  function fitValues(root) {
    for (const el of (root || document).querySelectorAll(".metric-value:not(.flag)")) {
      el.style.fontSize = ""; // CSSOM, which the CSP allows (no style attribute)
      if (!el.clientWidth) continue; // folded away: fitted when shown
      let size = parseFloat(getComputedStyle(el).fontSize);
      while (el.scrollWidth > el.clientWidth && size > MIN_VALUE_PX) {
        size = Math.max(MIN_VALUE_PX, Math.floor(size * Math.min(0.95, el.clientWidth / el.scrollWidth)));
        el.style.fontSize = size + "px";
      }
    }
  }
  document.addEventListener("DOMContentLoaded", () => fitValues());
  window.addEventListener("resize", () => fitValues());

  document.addEventListener("DOMContentLoaded", () => refreshTimes());
  document.addEventListener("htmx:afterSettle", (e) => refreshTimes(e.target));
  setInterval(() => refreshTimes(), 30000);

  // A chart drawn inside a folded <details> had no width: unfolding it redraws at the width it has.
  document.addEventListener(
    "toggle",
    (e) => {
      if (e.target instanceof HTMLDetailsElement && e.target.open && e.target.querySelector(".chart"))
        window.dispatchEvent(new Event("resize"));
    },
    true,
  );

  // --- toasts --------------------------------------------------------------------------------------

  function toast(text, kind, href) {
    const box = document.getElementById("toasts");
    if (!box) return;
    const item = document.createElement("div");
    item.className = "toast" + (kind ? " " + kind : "");
    if (kind === "error") {
      const same = [...box.querySelectorAll(".toast.error")].find((el) => el.textContent === text);
      if (same) {
        clearTimeout(same.dismiss);
        same.dismiss = setTimeout(() => same.remove(), 6000);
        return;
      }
    }
    if (href) {
      const link = document.createElement("a");
      link.href = href;
      link.textContent = text;
      item.appendChild(link);
    } else {
      item.textContent = text;
    }
    box.appendChild(item);
    item.dismiss = setTimeout(() => item.remove(), 6000);
  }
  window.signalboardToast = toast;

  // A failed htmx request: one toast, whichever events htmx raises for it (a request is reported
  // once), and a message already on screen is not stacked again (its toast stays up longer instead).
  const reported = new WeakSet();
  function failed(e, text) {
    const xhr = e.detail && e.detail.xhr;
    if (xhr) {
      if (reported.has(xhr)) return;
      reported.add(xhr);
    }
    toast(text, "error");
  }
  document.addEventListener("htmx:responseError", (e) => {
    const xhr = e.detail.xhr;
    failed(e, (xhr && xhr.responseText) || "The request failed.");
  });
  document.addEventListener("htmx:sendError", (e) => failed(e, "Cannot reach the server. Check your connection."));
  // A server's answer may ask for a toast (HX-Trigger: {"sb-toast": {"text": "..."}}).
  document.addEventListener("sb-toast", (e) => {
    if (e.detail && e.detail.text) toast(e.detail.text, "");
  });
  document.addEventListener("htmx:timeout", (e) => failed(e, "The server took too long to answer. Try again."));

  // --- Web Push -----------------------------------------------------------------------------------

  function csrfToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRF-Token"] || "";
    } catch {
      return "";
    }
  }

  function postJson(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
      body: JSON.stringify(body),
    });
  }

  const pushSupported = () =>
    "serviceWorker" in navigator && "PushManager" in window && "Notification" in window && window.isSecureContext;

  function base64urlToBytes(text) {
    const pad = "=".repeat((4 - (text.length % 4)) % 4);
    const raw = atob((text + pad).replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0));
  }

  function defaultDeviceName() {
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

  // A channel created live takes its place in the sidebar by name, as a reload would list it, and
  // what waits for it on the page (the Alerts page's Notices, data-shows-with-channel) shows.
  function addChannel(markup) {
    const item = fragment(markup);
    const list = document.getElementById("channel-list");
    if (!item || !list) return;
    const name = (li) => (li.textContent || "").trim().replace(/^#\s*/, "");
    if (!document.getElementById(item.id)) {
      const after = [...list.children].find((li) => name(li) > name(item));
      list.insertBefore(item, after || null);
    }
    for (const el of document.querySelectorAll("[data-shows-with-channel]"))
      if (el.dataset.showsWithChannel === name(item)) el.hidden = false;
  }

  // --- charts (uPlot) ------------------------------------------------------------------------------

  function chartTheme() {
    const style = getComputedStyle(document.documentElement);
    return { text: style.getPropertyValue("--muted").trim(), grid: style.getPropertyValue("--border").trim() };
  }

  // A number as stored: every significant digit it has (up to 15, what a double holds), grouped.
  const fullNumber = (n) =>
    Number.isInteger(n) ? n.toLocaleString() : n.toLocaleString(undefined, { maximumSignificantDigits: 15 });

  // Axis labels in short form (18.4K, 1.25M), with as many digits as it takes to tell them apart.
  function compactLabels(values) {
    for (let digits = 2; digits <= 15; digits++) {
      const format = new Intl.NumberFormat(undefined, { notation: "compact", maximumSignificantDigits: digits });
      const labels = values.map((v) => (v == null ? "" : format.format(v)));
      if (new Set(labels).size === labels.length) return labels;
    }
    return values.map((v) => (v == null ? "" : fullNumber(v)));
  }

  // The y-axis is as wide as its longest label (measured in the axis's font), so none is cut at the
  // chart's left edge. uPlot asks again after each layout pass, and stops after three.
  function axisWidth(u, labels, axisIdx) {
    const axis = u.axes[axisIdx];
    u.ctx.font = axis.font[0];
    const widest = Math.max(
      0,
      ...(labels || []).map((label) => u.ctx.measureText(String(label)).width / devicePixelRatio),
    );
    return Math.ceil(widest + axis.ticks.size + axis.gap + 4);
  }

  // Time labels as the pages write dates: "Nov 27" for days; for hours, "6 PM" (or "6:15 PM") with
  // its day below it where the day changes. The labels drawn go on the chart's element.
  function timeLabels(u, splits, axisIdx, space, incr) {
    let lastDay = null;
    const labels = splits.map((t) => {
      const at = new Date(t * 1000);
      const day = at.toLocaleDateString(undefined, { month: "short", day: "numeric" });
      if (incr >= DAY_S) return day;
      const clock = at.toLocaleTimeString(
        undefined,
        incr >= 3600 ? { hour: "numeric" } : { hour: "numeric", minute: "2-digit" },
      );
      const label = day === lastDay ? clock : clock + "\n" + day;
      lastDay = day;
      return label;
    });
    u.root.parentNode.dataset.xLabels = JSON.stringify(labels);
    return labels;
  }

  function axes() {
    const t = chartTheme();
    return [
      { stroke: t.text, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid }, values: timeLabels },
      {
        stroke: t.text,
        grid: { stroke: t.grid, width: 1 },
        ticks: { stroke: t.grid },
        // The labels drawn, on the chart's element, for whoever reads the page's markup (and the tests).
        values: (u, splits) => {
          const labels = compactLabels(splits);
          u.root.parentNode.dataset.yLabels = JSON.stringify(labels);
          return labels;
        },
        size: axisWidth,
      },
    ];
  }

  function drawChart(el, opts, data, height) {
    if (!window.uPlot) return null;
    height = height || 220;
    el.textContent = "";
    const width = Math.max(el.clientWidth, 280);
    const chart = new window.uPlot(Object.assign({ width, height, axes: axes() }, opts), data, el);
    // Follows its box, not only the window: a chart drawn while folded away (a closed <details>)
    // takes its width when it is shown.
    const onResize = () => {
      if (el.clientWidth > 0) chart.setSize({ width: Math.max(el.clientWidth, 280), height });
    };
    const observer = window.ResizeObserver ? new ResizeObserver(onResize) : null;
    if (observer) observer.observe(el);
    else window.addEventListener("resize", onResize);
    return {
      chart,
      dispose: () => {
        if (observer) observer.disconnect();
        else window.removeEventListener("resize", onResize);
        chart.destroy();
      },
    };
  }

  // A channel's colour is a slot of a palette of distinct colours, which the server picks (from its
  // name; an older channel keeps its colour when a newer one wants the same); one palette per theme.
  const darkMode = () => !!(window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches);
  const CHANNEL_COLORS = {
    light: ["#3b6fb6", "#e07b1a", "#2e9e5b", "#d6404e", "#7b5bb5", "#1797a6", "#c9489a", "#8a6d3b", "#b8a300"],
    dark: ["#6fa3ef", "#f5a04d", "#5cc98a", "#f2737e", "#a98ce6", "#4cc3d1", "#ec7fc0", "#c6a173", "#e3cf3f"],
  };
  const channelColor = (slot) =>
    (darkMode() ? CHANNEL_COLORS.dark : CHANNEL_COLORS.light)[slot % CHANNEL_COLORS.light.length];
  const otherColor = () => (darkMode() ? "#6b7280" : "#9ca3af");
  const COUNT_STEPS = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8,
  ];
  const DAY_S = 86400;

  // An x-axis of buckets (days, weeks, months): each label under its bucket's bar or point, every
  // bucket or every few as the width allows, counted back from the last, so the last label is the
  // newest bucket's (today), never the one after it. `xs`: where each bucket is drawn; `label(i, j)`:
  // the words for bucket i (j: the bucket labelled before it, or -1); `size`: a bucket's length (s); `steps`: how many buckets a label may
  // stand for. The labels depend on the buckets alone, so a chart says the same wherever it is
  // drawn, however wide. The ticks and labels drawn go on the chart's element.
  function bucketAxis(xs, label, size, steps) {
    return {
      space: 56,
      incrs: steps.map((n) => n * size),
      splits: (u, axisIdx, min, max, incr) => {
        const step = Math.max(1, Math.round(incr / size));
        return xs.filter((_, i) => (xs.length - 1 - i) % step === 0);
      },
      values: (u, splits) => {
        const labels = splits.map((x, k) => label(xs.indexOf(x), k ? xs.indexOf(splits[k - 1]) : -1));
        Object.assign(u.root.parentNode.dataset, { xTicks: JSON.stringify(splits), xLabels: JSON.stringify(labels) });
        return labels;
      },
    };
  }
  const HOUR_STEPS = [1, 2, 3, 4, 6, 12, 24, 48];
  const DAY_STEPS = [1, 2, 3, 7, 14, 28, 56, 91, 182];
  const WEEK_STEPS = [1, 2, 4, 8, 13, 26, 52];
  const MONTH_STEPS = [1, 2, 3, 6, 12, 24];
  const dayLabel = (seconds, timeZone) =>
    new Date(seconds * 1000).toLocaleDateString(undefined, { timeZone, month: "short", day: "numeric" });

  // The activity chart's days start at the viewer's midnight: each is named by its middle (a day
  // counted on from the first may start an hour off across a change of summer time).
  function dayAxis(days) {
    const middles = days.map((d) => d + DAY_S / 2);
    return bucketAxis(middles, (i) => dayLabel(middles[i]), DAY_S, DAY_STEPS);
  }

  // The zone a question's buckets start in (UTC unless it names one), when this browser knows it.
  function bucketZone(data) {
    try {
      return new Intl.DateTimeFormat(undefined, { timeZone: data.tz || "UTC" }).resolvedOptions().timeZone;
    } catch {
      return undefined;
    }
  }

  // A saved question by hour, day, week or month. An hour is named in the viewer's zone (unless the
  // question names one), as "6 PM" with its day below where the day changes; days, weeks and months
  // start at the midnights of the question's zone and are named there: a day or a week by its first
  // day ("Nov 27"), a month as "Nov 2026".
  function intervalAxis(data, xs) {
    if (data.interval === "hour") {
      const zone = data.tz && data.tz !== "UTC" ? bucketZone(data) : undefined;
      const day = (i) => dayLabel(data.t[i], zone);
      const clock = (i) =>
        new Date(data.t[i] * 1000).toLocaleTimeString(undefined, { timeZone: zone, hour: "numeric" });
      return bucketAxis(
        xs,
        (i, before) => (before >= 0 && day(before) === day(i) ? clock(i) : clock(i) + "\n" + day(i)),
        3600,
        HOUR_STEPS,
      );
    }
    const timeZone = bucketZone(data);
    if (data.interval === "month")
      return bucketAxis(
        xs,
        (i) => new Date(data.t[i] * 1000).toLocaleDateString(undefined, { timeZone, month: "short", year: "numeric" }),
        30.44 * DAY_S,
        MONTH_STEPS,
      );
    const week = data.interval === "week";
    return bucketAxis(
      xs,
      (i) => dayLabel(data.t[i], timeZone),
      week ? 7 * DAY_S : DAY_S,
      week ? WEEK_STEPS : DAY_STEPS,
    );
  }

  // Shows a chart's tooltip beside the pointer, on its left when the right would cut it.
  function placeTip(tip, u) {
    tip.hidden = false;
    const wrap = tip.parentElement.getBoundingClientRect();
    const over = u.over.getBoundingClientRect();
    let x = over.left - wrap.left + u.cursor.left + 12;
    if (x + tip.offsetWidth > wrap.width) x = Math.max(0, x - tip.offsetWidth - 24);
    tip.style.left = x + "px"; // CSSOM, which the CSP allows
    tip.style.top = Math.max(0, over.top - wrap.top) + "px";
  }

  function swatch(color) {
    const mark = document.createElement("span");
    mark.className = "swatch";
    mark.style.background = color; // CSSOM, which the CSP allows (no style attribute)
    return mark;
  }

  document.addEventListener("alpine:init", () => {
    const Alpine = window.Alpine;

    // The page shell: the sidebar is a drawer on narrow screens.
    Alpine.data("shell", () => ({
      navOpen: false,
      toggleNav() {
        this.navOpen = !this.navOpen;
      },
      closeNav() {
        this.navOpen = false;
      },
      shellClass() {
        return this.navOpen ? "nav-open" : "";
      },
      navOpenText() {
        return this.navOpen ? "true" : "false";
      },
    }));

    // The "+" buttons: show a small form and put the cursor in it; Escape closes it and returns to the "+".
    Alpine.data("toggle", () => ({
      open: false,
      flip() {
        this.open = !this.open;
        if (this.open)
          this.$nextTick(() => {
            const input = this.$root.querySelector("input");
            if (input) input.focus();
          });
      },
      close(event) {
        event = event || this.$event;
        if (!this.open) return;
        event.stopPropagation(); // Escape in the form closes the form, not the drawer around it
        this.open = false;
        this.$refs.button.focus();
      },
      openText() {
        return this.open ? "true" : "false";
      },
    }));

    // The account menu of the top bar (a menu on narrow screens; inline links on wide ones).
    Alpine.data("accountMenu", () => ({
      menuOpen: false,
      toggleMenu() {
        this.menuOpen = !this.menuOpen;
      },
      closeMenu() {
        if (!this.menuOpen) return;
        this.menuOpen = false;
        this.$refs.button.focus();
      },
      dismissMenu() {
        this.menuOpen = false;
      },
      menuClass() {
        return this.menuOpen ? "open" : "";
      },
      menuOpenText() {
        return this.menuOpen ? "true" : "false";
      },
    }));

    // A strip that scrolls sideways (the Settings tabs): a fade marks the edge that hides more.
    Alpine.data("scrollHint", () => ({
      start: false,
      end: false,
      init() {
        const strip = this.$refs.strip;
        const current = strip.querySelector('[aria-current="page"]');
        if (current && current.offsetLeft + current.offsetWidth > strip.clientWidth)
          strip.scrollLeft = current.offsetLeft - 16;
        this.update();
        strip.addEventListener("scroll", () => this.update(), { passive: true });
        window.addEventListener("resize", () => this.update());
      },
      update() {
        const strip = this.$refs.strip;
        this.start = strip.scrollLeft > 1;
        this.end = strip.scrollLeft + strip.clientWidth < strip.scrollWidth - 1;
      },
      hintClass() {
        return (this.start ? "more-start " : "") + (this.end ? "more-end" : "");
      },
    }));

    Alpine.data("filters", () => ({
      more: false,
      init() {
        this.more = !!this.$root.querySelector(".filter-more:not([x-cloak])");
        // Date filters are days where the viewer is: the server needs their offset from UTC.
        this.$refs.tz.value = String(-new Date().getTimezoneOffset());
      },
      toggleMore() {
        this.more = !this.more;
      },
      moreText() {
        return this.more ? "Fewer filters" : "More filters";
      },
      // The URL carries only what was filled in (a link to share), and the time zone only for dates.
      submit(event) {
        event = event || this.$event;
        event.preventDefault();
        const params = new URLSearchParams();
        for (const [name, value] of new FormData(this.$root))
          if (typeof value === "string" && value.trim() !== "") params.append(name, value);
        if (!params.has("from") && !params.has("to")) params.delete("tz");
        const url = new URL(this.$root.action);
        url.search = params.toString();
        location.assign(url.href);
      },
      // A line of the error summary: to its field, with the cursor in it.
      focusField(event) {
        event = event || this.$event;
        const field = document.getElementById(event.currentTarget.getAttribute("href").slice(1));
        if (!field) return;
        event.preventDefault();
        field.focus();
        field.scrollIntoView({ block: "center" });
      },
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
      close() {
        this.$root.close();
      },
    }));

    Alpine.data("copyButton", () => ({
      label: "Copy",
      // The source is a field (its value) or any element (its text).
      async copy() {
        const source = this.$refs.source;
        const field = source instanceof HTMLInputElement || source instanceof HTMLTextAreaElement;
        try {
          await navigator.clipboard.writeText(field ? source.value : source.textContent);
          this.label = "Copied";
        } catch {
          if (field) source.select();
          else window.getSelection().selectAllChildren(source);
          document.execCommand("copy");
          this.label = "Copied";
        }
        setTimeout(() => {
          this.label = "Copy";
        }, 2000);
      },
    }));

    // Settings → Notifications: "Enable on this device".
    Alpine.data("pushDevice", () => ({
      state: "checking",
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
        this.$refs.name.value = defaultDeviceName();
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
          const key = base64urlToBytes(this.$root.dataset.vapidKey);
          let subscription = await registration.pushManager.getSubscription();
          if (subscription) await subscription.unsubscribe(); // it may belong to another server key
          subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
          const json = subscription.toJSON();
          const response = await postJson("/settings/notifications/devices", {
            endpoint: json.endpoint,
            keys: json.keys,
            deviceName: this.$refs.name.value,
          });
          if (!response.ok)
            throw new Error(
              (await response.json().catch(() => ({}))).message || "The server refused the subscription.",
            );
          location.reload();
        } catch (e) {
          this.error = "Could not enable notifications: " + (e && e.message ? e.message : e);
        } finally {
          this.busy = false;
        }
      },
    }));

    Alpine.data("autoSubmit", () => ({
      submit() {
        this.$root.requestSubmit ? this.$root.requestSubmit() : this.$root.submit();
      },
    }));

    // Settings → Integrations: one fieldset per kind (data-kind), only the chosen kind's shown.
    Alpine.data("integrationForm", () => ({
      kind: "webhook",
      init() {
        this.kind = this.$root.dataset.kind || "webhook";
      },
      pick(event) {
        event = event || this.$event;
        this.kind = event.target.value;
      },
      isKind() {
        return this.$el.dataset.kind === this.kind;
      },
    }));

    // A digest's time zone: this browser's, unless one was typed.
    Alpine.data("timeZoneField", () => ({
      init() {
        if (!this.$el.value) {
          try {
            this.$el.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
          } catch {
            this.$el.value = "UTC";
          }
        }
      },
    }));

    Alpine.data("tokenForm", () => ({
      kind: "full",
      init() {
        const checked = this.$root.querySelector('input[name="kind"]:checked');
        this.kind = checked ? checked.value : "full";
      },
      pick(event) {
        event = event || this.$event;
        this.kind = event.target.value;
      },
      isPublic() {
        return this.kind === "public";
      },
    }));

    // Settings → Members: a person's projects. Ticking one means "only these"; "every project" clears the ticks.
    Alpine.data("projectChoice", () => ({
      pick(event) {
        event = event || this.$event;
        if (event.target.value === "all")
          for (const box of this.$root.querySelectorAll('input[name="projects"]')) box.checked = false;
      },
      tick(event) {
        event = event || this.$event;
        const some = this.$root.querySelector('input[name="reach"][value="some"]');
        if (some && event.target.checked) some.checked = true;
      },
    }));

    // Events per channel per day, as stacked bars: the channels with the most events in the range
    // (the server picks them; the rest are "other"), a legend with their totals, and the day's
    // counts on hover or tap. The x-axis is the whole range, days with nothing included.
    Alpine.data("activityChart", () => {
      let handle = null;
      return {
        days: 30,
        init() {
          this.load();
        },
        destroy() {
          if (handle) handle.dispose();
        },
        setRange(event) {
          event = event || this.$event;
          this.days = Number(event.target.value);
          this.load();
        },
        // Events arrived (the dashboard says so at most every few seconds): the answer everyone shares.
        refresh() {
          this.load(true);
        },
        async load(live) {
          const url = new URL(this.$root.dataset.url, location.href);
          if (live === true) url.searchParams.set("live", "1");
          url.searchParams.set("days", String(this.days));
          url.searchParams.set("tz", String(-new Date().getTimezoneOffset()));
          const response = await fetch(url, { headers: { Accept: "application/json" } });
          if (!response.ok) return;
          const data = await response.json();
          if (handle) handle.dispose();
          handle = null;
          const el = this.$refs.chart;
          const legend = this.$refs.legend;
          legend.textContent = "";
          this.$refs.tip.hidden = true;
          const groups = data.channels.map((name, i) => ({
            label: "#" + name,
            color: channelColor(data.colors[i]),
            counts: data.series[i],
            total: data.totals[i],
          }));
          if (data.other)
            groups.push({
              label: "other (" + data.other.channels + " channels)",
              color: otherColor(),
              counts: data.other.counts,
              total: data.other.total,
            });
          el.textContent = "";
          if (!groups.length) {
            el.textContent = data.filtered ? "No matching events in this range." : "No events in this range.";
            return;
          }
          for (const g of groups) {
            const item = document.createElement("li");
            const name = document.createElement("span");
            name.className = "legend-name";
            name.textContent = g.label;
            const total = document.createElement("span");
            total.className = "legend-total";
            total.textContent = g.total.toLocaleString();
            item.append(swatch(g.color), name, total);
            legend.appendChild(item);
          }
          // Each series is the running sum up to its group; the top of the stack is drawn first, so
          // each group's bar shows above the ones below it.
          let run = data.days.map(() => 0);
          const stacked = groups.map((g) => (run = run.map((v, d) => v + g.counts[d])));
          const order = groups.map((_, i) => groups.length - 1 - i);
          const bars = window.uPlot && window.uPlot.paths.bars({ size: [0.8, 40], gap: 1 });
          const start = data.days[0];
          const end = data.days[data.days.length - 1] + DAY_S;
          const opts = {
            series: [{}].concat(
              order.map((i) => ({
                label: groups[i].label,
                fill: groups[i].color,
                stroke: groups[i].color,
                width: 0,
                paths: bars,
                points: { show: false },
              })),
            ),
            legend: { show: false },
            cursor: { y: false, points: { show: false }, drag: { x: false, y: false } },
            scales: {
              x: { time: true, range: () => [start, end] },
              y: { range: (u, min, max) => [0, Math.max(1, max)] },
            },
            hooks: { setCursor: [(u) => this.showTip(u, groups, data.days)] },
          };
          const ax = axes();
          Object.assign(ax[0], dayAxis(data.days));
          ax[1].incrs = COUNT_STEPS;
          opts.axes = ax;
          handle = drawChart(el, opts, [data.days.map((d) => d + DAY_S / 2)].concat(order.map((i) => stacked[i])));
        },
        showTip(u, groups, days) {
          const tip = this.$refs.tip;
          const idx = u.cursor.idx;
          if (idx == null || u.cursor.left == null || u.cursor.left < 0) {
            tip.hidden = true;
            return;
          }
          tip.textContent = "";
          const head = document.createElement("strong");
          head.textContent = new Date((days[idx] + DAY_S / 2) * 1000).toLocaleDateString(undefined, {
            weekday: "short",
            year: "numeric",
            month: "short",
            day: "numeric",
          });
          const list = document.createElement("ul");
          let sum = 0;
          for (const g of groups) {
            const row = document.createElement("li");
            const name = document.createElement("span");
            name.textContent = g.label;
            const n = document.createElement("span");
            n.className = "tip-count";
            n.textContent = g.counts[idx].toLocaleString();
            sum += g.counts[idx];
            row.append(swatch(g.color), name, n);
            list.appendChild(row);
          }
          const total = document.createElement("div");
          total.className = "tip-total";
          total.textContent = sum.toLocaleString() + (sum === 1 ? " event" : " events");
          tip.append(head, list, total);
          placeTip(tip, u);
        },
      };
    });

    // A metric's page: its value now and its history over the chosen window (now - range .. now),
    // as a step line: a value holds until it changes, the one held when the window starts comes
    // in from the left edge. Both follow the metric live.
    Alpine.data("metricPage", () => {
      let handle = null;
      let source = null;
      let timer = null;
      let attempts = 0;
      // The window (Unix ms), the value held at its start, and the changes inside it ([minute, value]).
      let from = 0;
      let to = 0;
      let before = null;
      let current = null;
      let changes = [];
      const MARKED_CHANGES = 60;
      // The server sends a long window in spans (domain/metric-history.ts): [minute, value] for a span
      // of one point, else [first minute, first, lowest, highest, last minute, last]. The line passes
      // through all four, the lowest and highest between the ends (in the order that ends nearest the
      // last), so a spike shows however many minutes a pixel stands for.
      const expand = (span) => {
        if (span.length === 2) return [span];
        const [t0, first, lo, hi, t1, last] = span;
        // An extreme that is one of the ends is drawn there already.
        const inner = (last >= (lo + hi) / 2 ? [lo, hi] : [hi, lo]).filter(
          (v) => v !== null && v !== first && v !== last,
        );
        return [[t0, first], ...inner.map((v, i) => [t0 + ((t1 - t0) * (i + 1)) / (inner.length + 1), v]), [t1, last]];
      };
      const slide = (now) => {
        const span = to - from;
        to = Math.max(to, now);
        from = to - span;
        while (changes.length && changes[0][0] < from) before = changes.shift()[1];
      };
      const data = () => {
        const points = before === null ? [] : [[from, before]];
        for (const c of changes) points.push(c);
        if (!points.length && typeof current === "number") points.push([from, current]);
        if (points.length) points.push([to, points[points.length - 1][1]]);
        return [points.map((p) => p[0] / 1000), points.map((p) => p[1])];
      };
      return {
        init() {
          const el = this.$refs.chart;
          if (el) {
            from = Number(el.dataset.from);
            to = Number(el.dataset.to);
            before = JSON.parse(el.dataset.before);
            current = JSON.parse(el.dataset.current);
            changes = JSON.parse(el.dataset.points).flatMap(expand);
            const accent = getComputedStyle(document.documentElement).getPropertyValue("--accent").trim() || "#4f46e5";
            // Few changes in the window: each is marked with a dot, so a value set once (a point at
            // the right edge at 24 h) is seen, with its line on to now.
            const marks = () => {
              if (changes.length > MARKED_CHANGES) return null;
              const first = before === null ? 0 : 1;
              return changes.map((_, i) => first + i);
            };
            const opts = {
              // The legend says the time under the pointer as every page writes a time.
              series: [
                { value: (u, t) => (t == null ? "--" : dateTime(t * 1000)) },
                {
                  label: el.dataset.title,
                  value: (u, v) => (v == null ? "--" : fullNumber(v)),
                  stroke: accent,
                  width: 2,
                  fill: "rgba(79,70,229,0.08)",
                  paths: window.uPlot && window.uPlot.paths.stepped({ align: 1 }),
                  points: { show: false, filter: marks, size: 9, width: 2, fill: accent },
                },
              ],
              scales: { x: { time: true, range: () => [from / 1000, to / 1000] } },
              // The drawn window, for whoever reads the page's markup (and the tests).
              hooks: {
                setScale: [
                  (u, key) => {
                    if (key === "x") {
                      el.dataset.shownFrom = String(Math.round(u.scales.x.min * 1000));
                      el.dataset.shownTo = String(Math.round(u.scales.x.max * 1000));
                    }
                  },
                ],
                // Until the pointer is over the chart, its legend gives the value now (not "--").
                ready: [
                  (u) => {
                    if (u.data[0].length) u.setLegend({ idx: u.data[0].length - 1 });
                  },
                ],
              },
            };
            handle = drawChart(el, opts, data());
          }
          this.connect();
          window.addEventListener("beforeunload", () => this.disconnect());
        },
        destroy() {
          this.disconnect();
          if (handle) handle.dispose();
        },
        disconnect() {
          clearTimeout(timer);
          if (source) source.close();
          source = null;
        },
        connect() {
          const stream = new EventSource(new URL(this.$root.dataset.liveUrl, location.href));
          source = stream;
          stream.addEventListener("open", () => {
            attempts = 0;
          });
          stream.addEventListener("metric", (e) => this.onMetric(e));
          stream.addEventListener("channel", (e) => addChannel(e.data));
          stream.addEventListener("toast", (e) => {
            const d = JSON.parse(e.data);
            toast(d.text, "", d.href);
          });
          stream.addEventListener("error", () => {
            // EventSource retries network errors itself; a refused answer closes it for good.
            if (stream.readyState !== EventSource.CLOSED) return;
            this.disconnect();
            timer = setTimeout(() => this.connect(), Math.min(RECONNECT_MAX_MS, 1000 * 2 ** attempts++));
          });
        },
        onMetric(e) {
          const widget = fragment(e.data);
          if (!widget || widget.id !== "metric-" + this.$root.dataset.metricId) return;
          // The value now, as the server wrote it, and when it was set.
          const now = this.$root.querySelector("#metrics .metric");
          const value = widget.querySelector("[data-testid=metric-value]");
          const at = widget.querySelector(".metric-time");
          if (now && value && at) {
            const shown = now.querySelector("[data-testid=metric-value]");
            shown.textContent = value.textContent;
            shown.className = value.className;
            now.querySelector(".metric-time").replaceWith(at);
            refreshTimes(now);
            fitValues(now);
          }
          if (!handle) return;
          const next = JSON.parse(widget.dataset.value);
          const updated = Number(widget.dataset.updated);
          if (typeof next !== "number" && next !== null) return;
          current = next;
          const minute = updated - (updated % 60000);
          slide(Date.now());
          if (minute < from) before = next;
          else if (changes.length && changes[changes.length - 1][0] === minute) changes[changes.length - 1][1] = next;
          else if (!changes.length || changes[changes.length - 1][0] < minute) changes.push([minute, next]);
          handle.chart.setData(data());
        },
      };
    });

    // A saved question's series (views/charts.ts): lines or bars (stacked when split), one colour
    // per group from the palette, "other" in grey; a tooltip per bucket. The data comes in the
    // element's data-chart; the legend and totals are in the HTML.
    Alpine.data("seriesChart", () => {
      let handle = null;
      return {
        init() {
          const data = JSON.parse(this.$root.dataset.chart);
          const el = this.$refs.chart;
          for (const mark of this.$root.querySelectorAll(".swatch[data-slot]")) {
            const slot = Number(mark.dataset.slot);
            mark.style.background = slot < 0 ? otherColor() : channelColor(slot); // CSSOM: the CSP allows it
          }
          if (!el || !data.t.length) return;
          const lines = data.lines.map((l) =>
            Object.assign({}, l, { color: l.slot < 0 ? otherColor() : channelColor(l.slot) }),
          );
          const step = data.t.length > 1 ? data.t[1] - data.t[0] : DAY_S;
          const start = data.from !== undefined ? Math.min(data.t[0], data.from) : data.t[0];
          const end = data.to !== undefined ? data.to : data.t[data.t.length - 1] + step;
          const bar = data.display === "bar";
          let series;
          let values;
          let x = data.t;
          if (bar) {
            // Stacked: each line is the running sum up to it, drawn from the top of the stack down.
            let run = data.t.map(() => 0);
            const stacked = lines.map((l) => (run = run.map((v, i) => v + (l.values[i] || 0))));
            const order = lines.map((_, i) => lines.length - 1 - i);
            const paths = window.uPlot && window.uPlot.paths.bars({ size: [0.8, 40], gap: 1, align: 1 });
            series = order.map((i) => ({
              label: lines[i].label,
              fill: lines[i].color,
              stroke: lines[i].color,
              width: 0,
              paths: paths,
              points: { show: false },
            }));
            values = order.map((i) => stacked[i]);
          } else {
            const few = data.t.length <= 48;
            series = lines.map((l) => ({
              label: l.label,
              stroke: l.color,
              width: 2,
              points: { show: few, size: 5, fill: l.color },
            }));
            values = lines.map((l) => l.values);
            // A point stands for its bucket: drawn at its middle.
            x = data.t.map((t, i) => t + ((i + 1 < data.t.length ? data.t[i + 1] : end) - t) / 2);
          }
          const ax = axes();
          ax[1].incrs = data.interval === "auto" ? undefined : COUNT_STEPS;
          // By hour, day, week or month the x-axis names buckets, as the builder's preview does at any width.
          if (["hour", "day", "week", "month"].includes(data.interval)) Object.assign(ax[0], intervalAxis(data, x));
          const opts = {
            series: [{}].concat(series),
            legend: { show: false },
            axes: ax,
            cursor: { y: false, points: { show: !bar }, drag: { x: false, y: false } },
            scales: {
              x: { time: true, range: () => [start, end] },
              y: { range: (u, min, max) => [Math.min(0, min), Math.max(1, max)] },
            },
            hooks: { setCursor: [(u) => this.showTip(u, lines, data)] },
          };
          handle = drawChart(el, opts, [x].concat(values), data.compact ? 160 : 220);
        },
        destroy() {
          if (handle) handle.dispose();
        },
        showTip(u, lines, data) {
          const tip = this.$refs.tip;
          const idx = u.cursor.idx;
          if (!tip) return;
          if (idx == null || u.cursor.left == null || u.cursor.left < 0) {
            tip.hidden = true;
            return;
          }
          tip.textContent = "";
          const head = document.createElement("strong");
          const when = new Date(data.t[idx] * 1000);
          // An hour reads in the viewer's zone; a day, week or month is its bucket's, as the x-axis names it.
          const hourly = data.interval === "hour" || data.interval === "auto";
          const tz = hourly ? (data.tz && data.tz !== "UTC" ? data.tz : undefined) : bucketZone(data);
          head.textContent =
            data.interval === "hour" || data.interval === "auto"
              ? when.toLocaleString(undefined, {
                  timeZone: tz,
                  month: "short",
                  day: "numeric",
                  hour: "2-digit",
                  minute: "2-digit",
                })
              : (data.interval === "week" ? "Week of " : "") +
                when.toLocaleDateString(undefined, {
                  timeZone: tz,
                  year: "numeric",
                  month: data.interval === "month" ? "long" : "short",
                  day: data.interval === "month" ? undefined : "numeric",
                });
          const list = document.createElement("ul");
          for (const l of lines) {
            const row = document.createElement("li");
            const name = document.createElement("span");
            name.textContent = l.label;
            const n = document.createElement("span");
            n.className = "tip-count";
            const v = l.values[idx];
            n.textContent = v == null ? "—" : Number(v).toLocaleString(undefined, { maximumSignificantDigits: 15 });
            row.append(swatch(l.color), name, n);
            list.appendChild(row);
          }
          tip.append(head, list);
          placeTip(tip, u);
        },
      };
    });

    // A project's dashboard (views/dashboard.ts): its cards are asked again when events arrive, at
    // most every data-refresh-ms (the server answers everyone from one query per card); "Arrange
    // cards" shows the controls to move, add and remove them. After a move the server sends the
    // dashboard back with the moved card's control named in data-focus, which gets the focus.
    Alpine.data("dashboard", () => {
      let last = 0;
      let timer = null;
      return {
        arranging: false,
        init() {
          this.arranging = this.$root.dataset.arranging === "1";
          const focus = this.$root.dataset.focus;
          if (focus) {
            const target = document.getElementById(focus);
            // At an end the control is disabled: the same card's other move takes the focus, so a
            // second Enter moves that card, never another one.
            const other = /-(up|down)$/.test(focus)
              ? document.getElementById(focus.replace(/-(up|down)$/, (_, way) => (way === "up" ? "-down" : "-up")))
              : null;
            const fallback =
              other && !other.disabled ? other : this.$root.querySelector(".card-moves button:not([disabled])");
            const focusIt = () => {
              const el =
                target && !target.disabled ? target : fallback || this.$root.querySelector("[data-testid=arrange]");
              if (el) el.focus();
            };
            // Swapped in by htmx, its forms post through htmx only once htmx has processed them (when the
            // swap settles, marked by htmx-added until then): focused before, an Enter would submit the
            // bare form and reload the page instead of moving the card.
            if (this.$root.classList.contains("htmx-added"))
              this.$root.addEventListener("htmx:load", (e) => e.target === this.$root && focusIt());
            else this.$nextTick(focusIt);
          }
        },
        destroy() {
          clearTimeout(timer);
        },
        toggleArrange() {
          this.arranging = !this.arranging;
        },
        arrangingText() {
          return this.arranging ? "true" : "false";
        },
        eventsArrived() {
          const every = Number(this.$root.dataset.refreshMs) || 5000;
          const fire = () => {
            timer = null;
            last = Date.now();
            window.dispatchEvent(new CustomEvent("sb-refresh"));
            if (window.htmx)
              for (const el of this.$root.querySelectorAll("[data-live-url]")) {
                // A grid scrolled inside its card (retention) is where it was once drawn again:
                // cards are redrawn every few seconds while events arrive.
                const kept = [...el.querySelectorAll("[data-keep-scroll]")].map((s) => [s.scrollLeft, s.scrollTop]);
                window.htmx.ajax("GET", el.dataset.liveUrl, { target: el, swap: "innerHTML" }).then(() => {
                  el.querySelectorAll("[data-keep-scroll]").forEach((s, i) => {
                    if (kept[i]) [s.scrollLeft, s.scrollTop] = kept[i];
                  });
                });
              }
          };
          if (timer) return;
          const wait = last + every - Date.now();
          if (wait <= 0) fire();
          else timer = setTimeout(fire, wait);
        },
      };
    });

    // The chart builder's form: the viewer's time zone goes with the question (buckets start at
    // their midnights), and the fields that only some choices need show with them.
    Alpine.data("chartForm", () => ({
      init() {
        let changed = false;
        const zone = this.$root.querySelector("[data-viewer=zone]");
        if (zone && !zone.value) {
          zone.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
          changed = true;
        }
        const offset = this.$root.querySelector("[data-viewer=offset]");
        if (offset && !offset.value) {
          offset.value = String(-new Date().getTimezoneOffset());
          changed = true;
        }
        this.shown();
        if (changed) document.body.dispatchEvent(new CustomEvent("sb-viewer"));
      },
      changed() {
        this.shown();
      },
      addStep(event) {
        const next = this.$root.querySelector(".step-row[hidden]");
        if (!next) return;
        next.hidden = false;
        next.querySelector("input").focus();
        if (!this.$root.querySelector(".step-row[hidden]")) (event || this.$event).target.hidden = true;
      },
      shown() {
        const form = this.$root;
        const range = form.querySelector("[name=range]");
        for (const el of form.querySelectorAll("[data-range]")) el.hidden = !range || range.value !== el.dataset.range;
        const group = form.querySelector("[name=group_by]");
        for (const el of form.querySelectorAll("[data-group]"))
          el.hidden = !group || !group.value || (el.dataset.group !== "any" && el.dataset.group !== group.value);
      },
    }));

    // A form whose parts show for what a select says (data-controls="NAME" on the select,
    // data-show="NAME:value,value" on each part): the alert rule form. A field for the viewer's
    // time zone (data-viewer="zone") starts with it.
    Alpine.data("showFor", () => ({
      init() {
        const zone = this.$root.querySelector("[data-viewer=zone]");
        if (zone && !zone.value) zone.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
        this.changed();
      },
      changed() {
        const chosen = {};
        for (const select of this.$root.querySelectorAll("[data-controls]"))
          chosen[select.dataset.controls] = select.value;
        for (const part of this.$root.querySelectorAll("[data-show]")) {
          const [name, values] = part.dataset.show.split(":");
          part.hidden = !values.split(",").includes(chosen[name]);
        }
      },
    }));

    // The sidebar's channels of the open project follow new channels on every page. A page with a
    // stream of its own (a feed, a metric) gets them there; any other (Alerts, charts, a project's
    // settings) opens a stream of new channels alone.
    Alpine.data("channelList", () => {
      let source = null;
      let timer = null;
      let attempts = 0;
      return {
        init() {
          if (document.querySelector('[x-data="liveFeed"], [x-data="metricPage"]')) return;
          this.connect();
          window.addEventListener("beforeunload", () => this.disconnect());
        },
        destroy() {
          this.disconnect();
        },
        disconnect() {
          clearTimeout(timer);
          if (source) source.close();
          source = null;
        },
        connect() {
          const stream = new EventSource(new URL(this.$root.dataset.channelsUrl, location.href));
          source = stream;
          stream.addEventListener("open", () => {
            attempts = 0;
            this.$root.dataset.following = "1"; // for whoever reads the page's markup (and the tests)
          });
          stream.addEventListener("channel", (e) => addChannel(e.data));
          stream.addEventListener("error", () => {
            // EventSource retries network errors itself; a refused answer closes it for good.
            if (stream.readyState !== EventSource.CLOSED) return;
            this.disconnect();
            timer = setTimeout(() => this.connect(), Math.min(RECONNECT_MAX_MS, 1000 * 2 ** attempts++));
          });
        },
      };
    });

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
        window.addEventListener(
          "scroll",
          () => {
            if (this.atTop() && this.pending.length && !this.skipped) this.showPending();
          },
          { passive: true },
        );
      },
      destroy() {
        this.disconnect();
      },
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
        source.addEventListener("open", () => {
          this.connected = true;
          this.attempts = 0;
        });
        source.addEventListener("feed", (e) => this.onFeed(e));
        source.addEventListener("skipped", (e) => {
          this.skipped += JSON.parse(e.data).count || 0;
          window.dispatchEvent(new CustomEvent("sb-events"));
        });
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
      atTop() {
        return this.$root.getBoundingClientRect().top > -100;
      },
      onFeed(e) {
        window.dispatchEvent(new CustomEvent("sb-events"));
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
      hasPending() {
        return this.pending.length + this.skipped > 0;
      },
      pendingText() {
        const n = this.pending.length + this.skipped;
        return "↑ " + n + " new event" + (n === 1 ? "" : "s");
      },
      showPending() {
        // Events the server only counted are not on the page: load the feed as it is now.
        if (this.skipped) {
          location.reload();
          return;
        }
        const items = this.pending;
        this.pending = [];
        for (const item of items) if (!document.getElementById(item.id)) this.insert(item);
        if (this.$root.getBoundingClientRect().top < 0) this.$root.scrollIntoView({ block: "start" });
      },
      onMetric(e) {
        window.dispatchEvent(new CustomEvent("sb-events"));
        const widget = fragment(e.data);
        if (!widget) return;
        const existing = document.getElementById(widget.id);
        const grid = document.getElementById("metrics");
        if (existing) existing.replaceWith(widget);
        else if (grid) grid.appendChild(widget);
        refreshTimes(widget);
        fitValues(widget);
      },
      onChannel(e) {
        addChannel(e.data);
      },
      onToast(e) {
        const data = JSON.parse(e.data);
        toast(data.text, "", data.href);
      },
      statusText() {
        return this.connected ? "Live" : "Reconnecting…";
      },
      statusClass() {
        return this.connected ? "live" : "down";
      },
    }));
  });
})();
