// The dashboard over plain HTTP: set-up, sign-in, sessions, CSRF, headers, and escaping. The
// browser tests (test/e2e) cover what people click; these cover what an attacker would send.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Agent, post, signedIn, startTestApp, startTestServer, type TestApp } from "../helpers.ts";

const OWNER = { username: "owner", password: "correct horse battery staple" };

describe("set-up", () => {
  let server: TestApp;
  beforeAll(async () => {
    server = await startTestApp();
  });
  afterAll(() => server.close());

  test("without an owner, pages send you to /setup, and /setup needs the code", async () => {
    const agent = new Agent(server);
    const home = await agent.request("/p/default");
    expect(home.status).toBe(303);
    expect(home.headers.get("location")).toBe("/setup");
    expect((await agent.request("/setup")).status).toBe(403);
    expect((await agent.request("/setup?code=wrong")).status).toBe(403);
  });

  test("the code creates the owner once, signs them in, and then stops working", async () => {
    const code = (await server.services.accounts.setupCode())!;
    expect(code).toBeTruthy();
    const agent = new Agent(server);
    const token = await agent.formToken(`/setup?code=${code}`);
    const weak = await agent.request("/setup", {
      method: "POST",
      form: { _form: token, code, username: "owner", password: "short" },
    });
    expect(weak.status).toBe(422);
    expect(await weak.text()).toContain("at least 8 characters");
    const created = await agent.request("/setup", { method: "POST", form: { _form: token, code, ...OWNER } });
    expect(created.status).toBe(303);
    expect(agent.cookies.has("sb_session")).toBe(true);
    expect((await agent.request("/p/default")).status).toBe(200);
    expect(await server.services.accounts.setupCode()).toBeNull();
    const again = new Agent(server);
    expect((await again.request(`/setup?code=${code}`)).headers.get("location")).toBe("/login?setup=used");
    const replay = await again.request("/setup", {
      method: "POST",
      form: { _form: "x", code, username: "mallory", password: "12345678910" },
    });
    expect(replay.status).toBe(403);
  });

  test("sent several times at once (a double click, or a race), the code still makes one owner", async () => {
    const fresh = await startTestApp();
    try {
      const code = (await fresh.services.accounts.setupCode())!;
      const agents = Array.from({ length: 4 }, () => new Agent(fresh));
      const tokens = await Promise.all(agents.map((a) => a.formToken(`/setup?code=${code}`)));
      const answers = await Promise.all(
        agents.map((a, i) =>
          a.request("/setup", {
            method: "POST",
            form: { _form: tokens[i]!, code, username: `owner${i}`, password: OWNER.password },
          }),
        ),
      );
      expect(answers.map((r) => r.status).sort()).toEqual([303, 403, 403, 403]);
      expect((await fresh.services.accounts.list()).map((u) => u.role)).toEqual(["owner"]);
    } finally {
      await fresh.close();
    }
  });
});

describe("sessions", () => {
  let server: TestApp;
  beforeAll(async () => {
    server = await startTestApp({ "rate-limit-login": "3/m", "session-ttl": "2s" });
    await server.services.accounts.createUser(OWNER, "owner");
  });
  afterAll(() => server.close());

  test("a page needs sign-in and remembers where you were going", async () => {
    const res = await new Agent(server).request("/p/default/c/x?q=hi");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/login?next=${encodeURIComponent("/p/default/c/x?q=hi")}`);
  });

  test("the session cookie is HttpOnly and SameSite=Lax; a new one is issued at every sign-in", async () => {
    const agent = new Agent(server);
    const first = await agent.login(OWNER.username, OWNER.password);
    expect(first.status).toBe(303);
    const cookie = first.headers.getSetCookie().find((c) => c.startsWith("sb_session="))!;
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).not.toContain("Secure"); // plain http here; see the https test below
    // A session id planted before sign-in (session fixation) is replaced, never adopted.
    const victim = new Agent(server);
    victim.cookies.set("sb_session", "planted-by-attacker");
    await victim.login(OWNER.username, OWNER.password);
    expect(victim.cookies.get("sb_session")).not.toBe("planted-by-attacker");
    expect(victim.cookies.get("sb_session")).not.toBe(agent.cookies.get("sb_session"));
  });

  test("the next parameter cannot send you to another site", async () => {
    const agent = new Agent(server);
    const token = await agent.formToken("/login");
    const res = await agent.request("/login", {
      method: "POST",
      form: { _form: token, ...OWNER, next: "//evil.example/x" },
    });
    expect(res.headers.get("location")).toBe("/");
    // Browsers drop tabs and newlines inside URLs and read a backslash as a slash; signed in, the
    // same next comes from the query string.
    for (const next of [
      "/\t/evil.example",
      "/\n/evil.example",
      "/\\evil.example",
      "\\/evil.example",
      "/\u3002/x",
      "https://evil.example",
    ]) {
      expect((await agent.request(`/login?next=${encodeURIComponent(next)}`)).headers.get("location")).toBe("/");
    }
    expect(
      (await agent.request(`/login?next=${encodeURIComponent("/p/default?q=a%20b")}`)).headers.get("location"),
    ).toBe("/p/default?q=a%20b");
  });

  test("sign-out ends the session on the server, not only in the browser", async () => {
    const agent = await signedIn(server, OWNER);
    const stolen = agent.cookies.get("sb_session")!;
    const csrf = await agent.csrf();
    const out = await agent.request("/logout", { method: "POST", form: { _csrf: csrf } });
    expect(out.headers.get("location")).toBe("/login");
    const thief = new Agent(server);
    thief.cookies.set("sb_session", stolen);
    expect((await thief.request("/p/default")).status).toBe(303);
  });

  test("sessions expire", async () => {
    const agent = await signedIn(server, OWNER);
    expect((await agent.request("/p/default")).status).toBe(200);
    await server.clock.advance(2100);
    expect((await agent.request("/p/default")).status).toBe(303);
  });

  test("failed sign-ins are rate-limited per address, and then even the right password waits", async () => {
    const agent = new Agent(server);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await agent.login(OWNER.username, "wrong password")).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    const right = await agent.login(OWNER.username, OWNER.password);
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test("guesses sent in parallel are limited too: no more passwords are checked than the limit allows", async () => {
    // Passwords hashed at the production cost: each check takes long enough for all ten to overlap.
    const fresh = await startTestApp({ "rate-limit-login": "3/m" }, undefined, { passwordCost: null });
    try {
      await fresh.services.accounts.createUser(OWNER, "owner");
      const agents = Array.from({ length: 10 }, () => new Agent(fresh));
      const tokens = await Promise.all(agents.map((a) => a.formToken("/login")));
      // Ten guesses at once, every one of them right: were the limit checked before the (slow)
      // password check and charged after it, all ten would be checked, and any right one let in.
      const answers = await Promise.all(
        agents.map((a, i) => a.request("/login", { method: "POST", form: { _form: tokens[i]!, ...OWNER, next: "/" } })),
      );
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses).toEqual([303, 303, 303, 429, 429, 429, 429, 429, 429, 429]);
    } finally {
      await fresh.close();
    }
  });

  test("a right password does not use up the limit", async () => {
    const fresh = await startTestApp({ "rate-limit-login": "2/m" });
    try {
      await fresh.services.accounts.createUser(OWNER, "owner");
      for (let i = 0; i < 4; i++)
        expect((await new Agent(fresh).login(OWNER.username, OWNER.password)).status).toBe(303);
    } finally {
      await fresh.close();
    }
  });
});

describe("request bodies", () => {
  let server: TestApp;
  beforeAll(async () => {
    server = await startTestApp();
    await server.services.accounts.createUser(OWNER, "owner");
  });
  afterAll(() => server.close());

  /** A body sent chunked (no Content-Length), as a stream would be: the size is known only by reading it. */
  const chunked = (bytes: number) => {
    const piece = new TextEncoder().encode("a".repeat(64 * 1024));
    let sent = 0;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= bytes) return controller.close();
        controller.enqueue(piece);
        sent += piece.byteLength;
      },
    });
  };

  test("a form sent chunked without sign-in is cut off at the dashboard's limit with a 413, not read whole", async () => {
    const agent = new Agent(server);
    for (const path of ["/login", "/setup"]) {
      const res = await agent.request(path, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: chunked(16 * 1024 * 1024),
      });
      expect(res.status).toBe(413);
    }
  });

  test("a signed-in form sent chunked past the limit is a 413 too; a small one works", async () => {
    const agent = await signedIn(server, OWNER);
    const csrf = await agent.csrf();
    const big = await agent.request("/projects", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", "X-CSRF-Token": csrf },
      body: chunked(1024 * 1024),
    });
    expect(big.status).toBe(413);
    const small = await agent.request("/projects", {
      method: "POST",
      headers: { "X-CSRF-Token": csrf },
      form: { name: "chunky" },
    });
    expect(small.status).toBe(303);
    expect((await server.services.projects.list()).map((p) => p.name)).toContain("chunky");
  });
});

describe("CSRF", () => {
  let server: TestApp;
  let agent: Agent;
  let csrf: string;
  beforeAll(async () => {
    server = await startTestApp();
    await server.services.accounts.createUser(OWNER, "owner");
    agent = await signedIn(server, OWNER);
    csrf = await agent.csrf();
  });
  afterAll(() => server.close());

  test("a state change without the token is refused and changes nothing", async () => {
    const res = await agent.request("/projects", { method: "POST", form: { name: "sneaky" } });
    expect(res.status).toBe(403);
    expect(await server.store.projects.findByName("sneaky")).toBeNull();
  });

  test("a wrong token is refused", async () => {
    const res = await agent.request("/projects", { method: "POST", form: { name: "sneaky", _csrf: "nope" } });
    expect(res.status).toBe(403);
  });

  test("a request from another origin is refused even with the token", async () => {
    const res = await agent.request("/projects", {
      method: "POST",
      headers: { Origin: "https://evil.example", "X-CSRF-Token": csrf },
      form: { name: "sneaky" },
    });
    expect(res.status).toBe(403);
    expect(await server.store.projects.findByName("sneaky")).toBeNull();
  });

  test("the token in the header (as htmx sends it) works", async () => {
    const res = await agent.request("/projects", {
      method: "POST",
      headers: { "X-CSRF-Token": csrf, "HX-Request": "true", Origin: server.url },
      form: { name: "legit" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("hx-redirect")).toBe("/p/legit");
  });

  test("the sign-in form needs its own token too", async () => {
    const res = await new Agent(server).request("/login", { method: "POST", form: { ...OWNER } });
    expect(res.status).toBe(403);
  });

  test("invalid names come back as the form with a message (422)", async () => {
    const res = await agent.request("/projects", {
      method: "POST",
      headers: { "X-CSRF-Token": csrf, "HX-Request": "true" },
      form: { name: "Not Valid" },
    });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain("lowercase letters");
    const dup = await agent.request("/projects", {
      method: "POST",
      headers: { "X-CSRF-Token": csrf, "HX-Request": "true" },
      form: { name: "legit" },
    });
    expect(dup.status).toBe(422);
    expect(await dup.text()).toContain("already exists");
  });
});

describe("pages", () => {
  let server: TestApp;
  let agent: Agent;
  beforeAll(async () => {
    server = await startTestApp();
    await server.services.accounts.createUser(OWNER, "owner");
    agent = await signedIn(server, OWNER);
  });
  afterAll(() => server.close());

  test("a tag value with spaces is searched quoted, and its chip links to exactly that tag, in the chip's channel", async () => {
    await post(server, "/v1/log", {
      project: "default",
      channel: "plans",
      event: "Upgraded",
      tags: { plan: "pro plus" },
    });
    await post(server, "/v1/log", {
      project: "default",
      channel: "plans",
      event: "Stayed",
      tags: { plan: "pro" },
      description: "plus nothing",
    });
    const page = await (await agent.request(`/p/default?q=${encodeURIComponent('plan:"pro plus"')}`)).text();
    expect(page).toContain("Upgraded");
    expect(page).not.toContain("Stayed");
    const feed = await (await agent.request("/p/default/c/plans")).text();
    expect(feed).toContain(`href="/p/default/c/plans?${new URLSearchParams({ q: 'plan:"pro plus"' })}"`);
  });

  test("date filters are days where the viewer is (tz, minutes east of UTC, sent by the page)", async () => {
    const at = (iso: string) => Date.parse(iso) / 1000;
    await post(server, "/v1/log", {
      project: "default",
      channel: "days",
      event: "Late on the 10th UTC",
      timestamp: at("2026-01-10T23:30:00Z"),
    });
    await post(server, "/v1/log", {
      project: "default",
      channel: "days",
      event: "Early on the 11th UTC",
      timestamp: at("2026-01-11T00:30:00Z"),
    });
    const shown = async (tz: string) => {
      const page = await (await agent.request(`/p/default/c/days?from=2026-01-11&to=2026-01-11&tz=${tz}`)).text();
      return ["Late on the 10th UTC", "Early on the 11th UTC"].filter((name) => page.includes(name));
    };
    expect(await shown("0")).toEqual(["Early on the 11th UTC"]);
    expect(await shown("60")).toEqual(["Late on the 10th UTC", "Early on the 11th UTC"]); // Paris: both on the 11th
    expect(await shown("-60")).toEqual([]); // Azores: both on the 10th
  });

  test("carry a strict Content-Security-Policy and the other security headers", async () => {
    for (const path of ["/p/default", "/login", "/settings/api", "/nope"]) {
      const res = await agent.request(path, { headers: { Accept: "text/html" } });
      const csp = res.headers.get("content-security-policy")!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      expect(csp).not.toContain("unsafe-eval");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("same-origin");
    }
  });

  test("have no inline scripts or inline styles", async () => {
    const html = await (await agent.request("/p/default")).text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle="/);
    expect(html).not.toMatch(/\son[a-z]+="/);
  });

  test("escape event content: names, descriptions, tags, user ids", async () => {
    const payload = `<script>alert(1)</script><img src=x onerror=alert(1)>"'`;
    const res = await post(server, "/v1/log", {
      project: "default",
      channel: "xss",
      event: payload,
      description: payload,
      tags: { t: payload.slice(0, 200) },
      user_id: payload,
    });
    expect(res.status).toBe(200);
    const md = await post(server, "/v1/log", {
      project: "default",
      channel: "xss",
      event: "md",
      parser: "markdown",
      description: `[x](javascript:alert(1)) <img src=x onerror=alert(1)> **ok**`,
    });
    for (const path of [
      "/p/default",
      `/p/default/events/${res.json.id}`,
      `/p/default/events/${md.json.id}`,
      `/p/default/users/${encodeURIComponent(payload)}`,
    ]) {
      const html = await (await agent.request(path)).text();
      expect(html).not.toContain("<script>alert(1)");
      expect(html).not.toContain("<img src=x");
      expect(html).not.toContain('href="javascript:');
      if (!path.endsWith(`/${md.json.id}`)) expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    }
    expect(await (await agent.request(`/p/default/events/${md.json.id}`)).text()).toContain("<strong>ok</strong>");
  });

  test("the activity chart counts events per channel per day, in the viewer's time zone", async () => {
    const day = 86_400;
    const now = Math.floor(Date.now() / 1000);
    await server.services.projects.create("charted");
    for (const [channel, ago] of [
      ["a", 0],
      ["a", 0],
      ["b", 0],
      ["a", 2 * day],
      ["b", 40 * day],
    ] as const) {
      await post(server, "/v1/log", {
        project: "charted",
        channel,
        event: "e",
        ...(ago ? { timestamp: now - ago } : {}),
      });
    }
    const res = await agent.request("/p/charted/activity.json?days=7&tz=0");
    const data = await res.json();
    expect(data.days).toHaveLength(7);
    expect(data.channels).toEqual(["a", "b"]);
    expect(data.series[0].at(-1)).toBe(2);
    expect(data.series[0].at(-3)).toBe(1);
    expect(data.series[1].reduce((x: number, y: number) => x + y, 0)).toBe(1); // the one from 40 days ago is outside
    const startOfToday = Math.floor(now / day) * day;
    expect(data.days.at(-1)).toBe(startOfToday);
    const shifted = await (await agent.request("/p/charted/activity.json?days=7&tz=600")).json();
    expect(shifted.days.at(-1) % day).toBe(day - 600 * 60);
  });

  test("an unknown page is an HTML 404 for a browser and JSON for an API client", async () => {
    const page = await agent.request("/no/such/page", { headers: { Accept: "text/html" } });
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toContain("text/html");
    const api = await server.fetch(`/no/such/page`);
    expect(api.status).toBe(404);
    expect((await api.json()).error).toBe("not_found");
  });

  test("assets are served from the binary under hashed URLs, cached forever, gzipped on request", async () => {
    const html = await (await agent.request("/p/default")).text();
    const urls = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(urls.some((u) => /\/assets\/htmx\.[0-9a-f]{12}\.js$/.test(u))).toBe(true);
    expect(urls.some((u) => /\/assets\/alpine\.[0-9a-f]{12}\.js$/.test(u))).toBe(true);
    for (const url of urls) {
      const res = await server.fetch(url, { headers: { "Accept-Encoding": "gzip" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toContain("immutable");
    }
    expect((await server.fetch(`/assets/app.000000000000.js`)).status).toBe(404);
  });

  test("the session cookie is Secure when the dashboard is served over https", async () => {
    const secure = await startTestApp({ "base-url": "https://signalboard.example.com" });
    try {
      await secure.services.accounts.createUser(OWNER, "owner");
      const a = new Agent(secure);
      const res = await a.login(OWNER.username, OWNER.password);
      expect(res.headers.getSetCookie().find((c) => c.startsWith("sb_session="))).toContain("Secure");
    } finally {
      await secure.close();
    }
  });

  test("behind a trusted proxy that says https, the sign-in form's cookie is Secure too", async () => {
    // Listening: the proxy is trusted by the address the request comes from.
    const proxied = await startTestServer({ "trust-proxy": "127.0.0.1" });
    try {
      await proxied.services.accounts.createUser(OWNER, "owner");
      const page = await fetch(`${proxied.url}/login`, { headers: { "X-Forwarded-Proto": "https" } });
      expect(page.headers.getSetCookie().find((c) => c.startsWith("sb_form="))).toContain("Secure");
      const plain = await fetch(`${proxied.url}/login`);
      expect(plain.headers.getSetCookie().find((c) => c.startsWith("sb_form="))).not.toContain("Secure");
    } finally {
      await proxied.close();
    }
  });

  test("only the owner manages members", async () => {
    const csrf = await agent.csrf();
    const add = await agent.request("/settings/members", {
      method: "POST",
      headers: { "X-CSRF-Token": csrf, "HX-Request": "true" },
      form: { username: "member1", password: "member password 1" },
    });
    expect(add.status).toBe(200);
    const member = await signedIn(server, { username: "member1", password: "member password 1" });
    const memberCsrf = await member.csrf();
    const attempt = await member.request("/settings/members", {
      method: "POST",
      headers: { "X-CSRF-Token": memberCsrf },
      form: { username: "member2", password: "member password 2" },
    });
    expect(attempt.status).toBe(403);
    expect(await server.store.users.findByUsername("member2")).toBeNull();
  });
});

describe("odd names in URLs", () => {
  test("user ids and metric titles with %, /, spaces and emoji open their pages", async () => {
    const server = await startTestApp();
    try {
      await server.services.accounts.createUser(OWNER, "owner");
      const agent = await signedIn(server, OWNER);
      for (const id of ["100%", "a/b", "first last", "✓ done", "%zz"]) {
        await post(server, "/v1/log", { project: "default", channel: "odd", event: `by ${id}`, user_id: id });
        const res = await agent.request(`/p/default/users/${encodeURIComponent(id)}`);
        expect(res.status).toBe(200);
        expect(await res.text()).toContain(`by ${id}`);
      }
      await post(server, "/send-metric", { title: "CPU % / host", value: 3 });
      expect((await agent.request(`/p/default/metrics/${encodeURIComponent("CPU % / host")}`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
