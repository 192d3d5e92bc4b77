// docs/web.md's React, Next, Vue and Astro usage, in real Chromium: its signalboard.js module and
// signalboard-init.js file, served exactly as the page prints them (with this server, token and
// project), placed as each framework places them, on a site of another origin under a strict CSP.
// No framework is installed: what matters to the tracker is when and how its script tag and the
// window.ls calls arrive, and each page reproduces that. The calls must record the events, the page
// views (the router's pushState included) and the user's properties.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { type Agent, call, eventually, signedIn, startTestServer, type TestServer } from "../helpers.ts";
import { CHROMIUM, describeBrowser, launch, OWNER, withPage } from "./browser.ts";
import { type HostSite, html, startHostSite } from "./host-site.ts";

const DOC = readFileSync(join(import.meta.dir, "../../docs/web.md"), "utf8");

/** The code block of docs/web.md whose first line is `// NAME`. */
function documented(name: string): string {
  const block = [...DOC.matchAll(/```js\n([^]*?)```/g)]
    .map((m) => m[1]!)
    .find((code) => code.startsWith(`// ${name}\n`));
  if (!block) throw new Error(`docs/web.md has no js block starting with // ${name}`);
  return block;
}

let browser: Browser;
let server: TestServer;
let site: HostSite;
let owner: Agent;
let token: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  browser = await launch();
  server = await startTestServer();
  await server.services.projects.create("my-saas");
  await server.services.accounts.createUser(OWNER, "owner");
  owner = await signedIn(server, OWNER);
  token = (await server.services.tokens.create({ name: "site", kind: "public", project: "my-saas" })).token;
  site = startHostSite(server.url);
  site.set("/site.css", "body { font-family: serif; }");
  const ours = (code: string) =>
    code.replaceAll("https://signalboard.example.com", server.url).replaceAll("<PUBLIC_TOKEN>", token);
  site.set("/signalboard.js", ours(documented("signalboard.js")));
  site.set("/signalboard-init.js", ours(documented("public/signalboard-init.js")));
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await server?.close();
});

// What the page's own code does, per framework (the part each framework runs for you).
const APPS: Record<string, { head: string; app: string; routes: boolean }> = {
  // React: effects run after the first render; the router moves with pushState; handlers call track.
  react: {
    head: `<script type="module" src="/fw/react.js"></script>`,
    routes: true,
    app: `import { identify, loadSignalboard, setUserId, track } from "/signalboard.js";
requestAnimationFrame(() => {
  loadSignalboard("TOKEN", "my-saas");
  setUserId("react-user");
  identify({ properties: { framework: "react" } });
});
document.getElementById("nav").addEventListener("click", () => history.pushState({}, "", "/fw/react/settings"));
document.getElementById("go").addEventListener("click", () => track({ channel: "frameworks", event: "Hello from react", icon: "💰" }));`,
  },
  // Next: the init file is in the server's HTML; next/script adds the tracker once the page is interactive.
  next: {
    head: `<script src="/signalboard-init.js"></script><script type="module" src="/fw/next.js"></script>`,
    routes: true,
    app: `import { identify, setUserId, track } from "/signalboard.js";
addEventListener("load", () => {
  const script = document.createElement("script");
  script.src = "SIGNALBOARD/web/ls.js";
  script.async = true;
  document.body.appendChild(script);
});
setUserId("next-user");
identify({ properties: { framework: "next" } });
document.getElementById("nav").addEventListener("click", () => history.pushState({}, "", "/fw/next/settings"));
document.getElementById("go").addEventListener("click", () => track({ channel: "frameworks", event: "Hello from next", icon: "💰" }));`,
  },
  // Vue: the plugin installs when the app starts, before it mounts.
  vue: {
    head: `<script type="module" src="/fw/vue.js"></script>`,
    routes: true,
    app: `import { identify, loadSignalboard, setUserId, track } from "/signalboard.js";
const app = { plugins: [], use(plugin) { plugin.install(app); return app; }, mount() { setUserId("vue-user"); identify({ properties: { framework: "vue" } }); } };
app.use({ install: () => loadSignalboard("TOKEN", "my-saas") }).mount("#app");
document.getElementById("nav").addEventListener("click", () => history.pushState({}, "", "/fw/vue/settings"));
document.getElementById("go").addEventListener("click", () => track({ channel: "frameworks", event: "Hello from vue", icon: "💰" }));`,
  },
  // Astro: the two is:inline tags in the head, the page's <script> bundled as a module.
  astro: {
    head: `<script async src="SIGNALBOARD/web/ls.js"></script><script src="/signalboard-init.js"></script><script type="module" src="/fw/astro.js"></script>`,
    routes: false,
    app: `import { identify, setUserId, track } from "/signalboard.js";
setUserId("astro-user");
identify({ properties: { framework: "astro" } });
document.getElementById("go").addEventListener("click", () => track({ channel: "frameworks", event: "Hello from astro", icon: "💰" }));`,
  },
};

type Event = { id: number; channel: string; event: string; icon: string | null; user_id: string };

describeBrowser("docs/web.md's framework usage, placed as each framework places it", () => {
  for (const [name, spec] of Object.entries(APPS)) {
    test(`${name}: the same window.ls calls record events, page views and properties`, async () => {
      const fill = (text: string) =>
        text.replaceAll("SIGNALBOARD", server.url).replaceAll('"TOKEN"', JSON.stringify(token));
      site.set(`/fw/${name}.js`, fill(spec.app));
      site.set(
        `/fw/${name}`,
        html(
          fill(spec.head),
          `<div id="app"><button id="go">Go</button> <button id="nav">Settings</button> <a href="#" data-event="Clicked ${name}" data-channel="frameworks">Link</a></div>`,
        ),
      );
      await withPage(browser, `framework-${name}`, async (page) => {
        await page.goto(`${site.origin}/fw/${name}`);
        await page.waitForFunction(() => (window as any).ls?.signalboard === true);
        // One tracker, however the script was added.
        expect(await page.evaluate(() => document.querySelectorAll('script[src$="/web/ls.js"]').length)).toBe(1);
        const recorded = (expected: string[]) =>
          eventually(async () => {
            const res = await call(server, { path: `/v1/events?project=my-saas&user_id=${name}-user` });
            expect((res.json.events as Event[]).map((e) => `${e.channel} ${e.event}`).sort()).toEqual(expected.sort());
          });
        await recorded([`pageviews /fw/${name}`]);
        await page.click("#go");
        await page.click("text=Link");
        if (spec.routes) await page.click("#nav"); // the router moves
        await recorded([
          `frameworks Clicked ${name}`,
          `frameworks Hello from ${name}`,
          `pageviews /fw/${name}`,
          ...(spec.routes ? [`pageviews /fw/${name}/settings`] : []),
        ]);
      });
      const profile = await eventually(async () => {
        const text = await (await owner.request(`/p/my-saas/users/${name}-user`)).text();
        expect(text).toContain(`<dt>framework</dt><dd>${name}</dd>`);
        return text;
      });
      expect(profile).toContain(`Hello from ${name}`);
    });
  }
});
