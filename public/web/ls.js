// Signalboard's browser tracker, LogSnag-compatible: a site loads it with
// <script async src="https://SIGNALBOARD/web/ls.js"> and calls window.ls (docs/web.md). Plain ES,
// served as written. It never throws into the page, sets no cookie, reads nothing to tell visitors
// apart, and sends nothing before setConfig (page views: nothing before setUserId either).
(() => {
  "use strict";
  const w = window;
  if (w.ls && w.ls.signalboard) return; // loaded twice: the first copy keeps the queue

  // Requests go where the script came from (an async script still has currentScript while it runs).
  const script = document.currentScript || document.querySelector('script[src*="/web/ls.js"]');
  let origin = location.origin;
  try {
    origin = new URL(script.src, location.href).origin;
  } catch (_) {}

  const state = { token: null, project: null, userId: null, debug: false, viewed: null, held: [] };
  const log = (...args) => state.debug && console.log("[Signalboard]", ...args);
  const fail = (...args) => state.debug && console.error("[Signalboard]", ...args);

  function send(path, body) {
    if (!state.token) {
      // Held until setConfig (a few only: a page that never configures must not grow without end).
      if (state.held.length < 50) state.held.push([path, body]);
      return log("held until setConfig:", path, body);
    }
    body.project = state.project;
    let json;
    try {
      json = JSON.stringify(body);
    } catch (error) {
      // A value JSON cannot hold (a BigInt, a cycle): this call is lost, not the calls held with it.
      return fail(`${path} not sent: ${error && error.message}`);
    }
    log("POST", path, body);
    // keepalive: the request outlives the page when a click navigates away. Not sendBeacon: it
    // cannot carry the Authorization header. keepalive bodies are capped at 64 KiB (bytes).
    fetch(origin + path, {
      method: "POST",
      keepalive: new TextEncoder().encode(json).length < 60000,
      credentials: "omit",
      headers: { Authorization: `Bearer ${state.token}`, "Content-Type": "application/json" },
      body: json,
    }).then(
      async (res) => {
        if (res.ok) return log(res.status, path);
        let message = res.statusText;
        try {
          message = (await res.json()).message || message;
        } catch (_) {}
        fail(`${path} answered ${res.status}: ${message}`);
      },
      (error) => fail(`${path} could not reach ${origin}: ${error && error.message}`),
    );
  }

  const originOf = (url) => {
    try {
      const o = new URL(url).origin;
      return o === "null" ? undefined : o;
    } catch (_) {}
  };

  // One view per path and user: history navigation that keeps the path (a query, a hash) is not another page.
  function pageView() {
    if (!state.token || !state.userId) return;
    const path = location.pathname.slice(0, 200);
    const key = `${state.userId}\n${path}`;
    if (key === state.viewed) return;
    // The first page's referrer is the site the visitor came from; later ones, this site itself.
    const referrer = originOf(state.viewed === null ? document.referrer : location.href);
    state.viewed = key;
    const utm = new URLSearchParams(location.search).get("utm_source");
    const payload = {
      path,
      referrer,
      title: document.title.slice(0, 1000) || undefined,
      utm_source: utm ? utm.slice(0, 256) : undefined,
    };
    send("/v1/page", { user_id: state.userId, payload });
  }

  // Unix seconds, as the API wants; LogSnag's clients also take a Date or milliseconds.
  const seconds = (t) => (t instanceof Date ? t.getTime() / 1000 : typeof t === "number" && t > 1e11 ? t / 1000 : t);

  const commands = {
    setConfig(token, project) {
      if (typeof token !== "string" || typeof project !== "string")
        return fail('setConfig needs a token and a project: ls("setConfig", "<TOKEN>", "<PROJECT>")');
      state.token = token;
      state.project = project;
      for (const [path, body] of state.held.splice(0)) send(path, body);
      pageView();
    },
    setUserId(id) {
      if (id === null || id === undefined || id === "") return commands.clearUserId();
      state.userId = String(id);
      pageView();
    },
    clearUserId() {
      state.userId = null;
    },
    setDebug(flag = true) {
      state.debug = !!flag;
    },
    track(options) {
      const o = options || {};
      send("/v1/log", { ...o, user_id: o.user_id || state.userId || undefined, timestamp: seconds(o.timestamp) });
    },
    identify(options) {
      const o = options || {};
      const userId = o.user_id || state.userId;
      if (!userId) return fail("identify needs a user_id, or setUserId first");
      send("/v1/identify", { user_id: userId, properties: o.properties || {} });
    },
  };

  function run(args) {
    try {
      const [name, ...rest] = Array.from(args || []);
      if (!Object.prototype.hasOwnProperty.call(commands, name)) return fail(`unknown command ${JSON.stringify(name)}`);
      commands[name](...rest);
    } catch (error) {
      fail(error);
    }
  }

  // Click tracking: any element with data-event, added at any time; captured before the page's own
  // handlers can stop the click.
  const attributeTags = (el) => {
    const tags = {};
    for (const { name, value } of Array.from(el.attributes)) {
      const key =
        name.toLowerCase().startsWith("data-tag-") &&
        name
          .slice(9)
          .toLowerCase()
          .replace(/[^a-z0-9-]/g, "-");
      if (key) tags[key] = value === "true" ? true : value === "false" ? false : value;
    }
    return Object.keys(tags).length ? tags : undefined;
  };
  document.addEventListener(
    "click",
    (event) => {
      try {
        const el = event.composedPath().find((node) => node instanceof Element && node.hasAttribute("data-event"));
        const name = el && el.getAttribute("data-event");
        if (!name) return;
        const data = (key) => el.getAttribute(`data-${key}`) || undefined;
        commands.track({
          channel: data("channel") || "clicks",
          event: name,
          icon: data("icon"),
          description: data("description"),
          notify: data("notify") === "true" || undefined,
          user_id: data("user-id"),
          tags: attributeTags(el),
        });
      } catch (error) {
        fail(error);
      }
    },
    true,
  );

  // Page views in single-page apps: the router moves with pushState/replaceState, Back with popstate.
  // Read after the router's own work (the title changes after the URL).
  const navigated = () =>
    setTimeout(() => {
      try {
        pageView();
      } catch (error) {
        fail(error);
      }
    }, 0);
  for (const name of ["pushState", "replaceState"]) {
    const original = history[name];
    if (typeof original !== "function") continue;
    history[name] = function (...args) {
      const result = original.apply(this, args);
      navigated();
      return result;
    };
  }
  w.addEventListener("popstate", navigated);

  // The queue the snippet left, then the real function. A snippet that kept the queue itself (or
  // calls the stub it made) reaches the same commands through lsq.push.
  const queued = Array.isArray(w.lsq) ? w.lsq : [];
  const ls = (...args) => run(args);
  ls.signalboard = true;
  w.lsq = { push: (...items) => (items.forEach(run), 0) };
  w.ls = ls;
  queued.forEach(run);
})();
