// The feedback widget (/feedback/ls.js) in real Chromium, loaded as a module by a site of another
// origin under a strict Content-Security-Policy: a button with LogSnag's data-logsnag-* attributes
// opens a dialog in an open shadow root, used by keyboard alone at 375 px, in dark mode, with axe;
// the host page's styles do not reach it and it does not change them; errors show in the widget and
// nothing is thrown. What was sent is checked through the API. withPage fails a test on any page
// error or CSP violation (the widget's styles are a constructable stylesheet: no style-src needed).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Browser, Page } from "playwright-core";
import { call, eventually, startTestServer, type TestServer } from "../helpers.ts";
import { CHROMIUM, describeBrowser, launch, STEP_TIMEOUT, withPage } from "./browser.ts";
import { type HostSite, html, startHostSite } from "./host-site.ts";

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

let browser: Browser;
let server: TestServer;
let site: HostSite;
let token: string;
let revoked: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  browser = await launch();
  server = await startTestServer();
  await server.services.projects.create("shop");
  token = (
    await server.services.tokens.create({ name: "widget", kind: "public", project: "shop", channel: "feedback" })
  ).token;
  const gone = await server.services.tokens.create({ name: "old widget", kind: "public", project: "shop" });
  await server.services.tokens.revoke(String(gone.info.id));
  revoked = gone.token;
  site = startHostSite(server.url);
  // A site whose own styles would spoil a form that inherited them.
  site.set(
    "/site.css",
    "* { font-family: serif; } button, textarea { color: rgb(128, 0, 0); background: rgb(255, 255, 0); } dialog { background: rgb(0, 128, 0); }",
  );
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await server?.close();
});

const button = (attributes: Record<string, string>, label = "Feedback") =>
  `<button id="feedback" data-logsnag-feedback ${Object.entries(attributes)
    .map(([k, v]) => `data-logsnag-${k}="${v}"`)
    .join(" ")}>${label}</button>`;
const widget = () => `<script type="module" src="${server.url}/feedback/ls.js"></script>`;

async function open(page: Page, path: string, markup: string) {
  site.set(path, html(widget(), `<main><h1>Shop</h1><p>Tell us what you think: ${markup}</p></main>`));
  await page.goto(site.origin + path);
  await page.waitForFunction(() => (window as any)[Symbol.for("signalboard.feedback")] === true);
}

/** The id (or the text) of the focused element inside the widget's shadow root; null when focus is elsewhere. */
const focusedInWidget = (page: Page) =>
  page.evaluate(() => {
    const focused = document.querySelector("[data-signalboard-feedback]")?.shadowRoot?.activeElement;
    return focused ? focused.id || focused.textContent : null;
  });
/** A computed style of an element inside the widget. */
const widgetStyle = (page: Page, selector: string, property: string) =>
  page.evaluate(
    ([s, p]) =>
      getComputedStyle(
        document.querySelector("[data-signalboard-feedback]")!.shadowRoot!.querySelector(s!)!,
      ).getPropertyValue(p!),
    [selector, property],
  );

async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ["violations"] });
    return result.violations
      .filter((v: { impact: string }) => v.impact === "serious" || v.impact === "critical")
      .map(
        (v: { id: string; help: string; nodes: { target: unknown }[] }) =>
          `${v.id}: ${v.help} ${JSON.stringify(v.nodes.map((n) => n.target))}`,
      );
  });
}

type Event = {
  channel: string;
  event: string;
  description: string;
  icon: string;
  user_id: string | null;
  tags: Record<string, unknown>;
};
const feedback = async (): Promise<Event[]> => {
  const res = await call(server, { path: "/v1/events?project=shop&channel=feedback" });
  return res.status === 404 ? [] : res.json.events;
};

describeBrowser("the feedback widget on a site of another origin, under a strict CSP", () => {
  test("by keyboard alone at 375 px: open, mistakes explained, send, thanks, closed, focus back", async () => {
    await withPage(
      browser,
      "feedback-keyboard-375",
      async (page) => {
        await open(
          page,
          "/keyboard",
          button({
            token,
            project: "shop",
            channel: "feedback",
            "user-id": "user-42",
            "tag-username": "john.doe",
            "tag-beta": "true",
          }),
        );
        for (let i = 0; i < 5 && (await page.evaluate(() => document.activeElement?.id)) !== "feedback"; i++)
          await page.keyboard.press("Tab");
        expect(await page.evaluate(() => document.activeElement?.id)).toBe("feedback");
        await page.keyboard.press("Enter");

        const dialog = page.getByRole("dialog", { name: "Send feedback" });
        await dialog.waitFor();
        expect(
          await page.evaluate(() => document.querySelector("[data-signalboard-feedback]")!.shadowRoot !== null),
        ).toBe(true); // open shadow root
        expect(await focusedInWidget(page)).toBe("sb-text");
        expect(await dialog.getByRole("textbox", { name: "Your feedback" }).count()).toBe(1);
        expect(await dialog.getByRole("textbox", { name: /E-mail/ }).count()).toBe(1);

        // Send with nothing written: told so, in the widget, and taken back to the text box.
        await page.keyboard.press("Tab"); // e-mail
        await page.keyboard.press("Tab"); // Cancel
        await page.keyboard.press("Tab"); // Send
        expect(await focusedInWidget(page)).toBe("Send");
        await page.keyboard.press("Enter");
        expect(await dialog.getByRole("alert").innerText()).toBe("Please write your feedback first.");
        expect(await focusedInWidget(page)).toBe("sb-text");

        await page.keyboard.type("The export button is hard to find.");
        await page.keyboard.press("Tab");
        await page.keyboard.type("not-an-email");
        await page.keyboard.press("Tab");
        await page.keyboard.press("Tab");
        await page.keyboard.press("Enter");
        expect(await dialog.getByRole("alert").innerText()).toBe(
          "Please enter a valid e-mail address, or leave it empty.",
        );
        expect(await focusedInWidget(page)).toBe("sb-email");
        await page.keyboard.press("ControlOrMeta+A");
        await page.keyboard.type("ann@example.com");

        // At 375 px the whole form is on screen and the page does not scroll sideways.
        const box = (await dialog.boundingBox())!;
        expect(box.x).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width).toBeLessThanOrEqual(375);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
        for (const name of ["Cancel", "Send"]) {
          const b = (await dialog.getByRole("button", { name }).boundingBox())!;
          expect(b.x + b.width).toBeLessThanOrEqual(375);
          expect(b.height).toBeGreaterThanOrEqual(44);
        }
        // The site's styles stay outside, and the widget's stay inside.
        expect(await widgetStyle(page, "button.primary", "color")).toBe("rgb(255, 255, 255)");
        expect(await widgetStyle(page, "textarea", "font-family")).toStartWith("system-ui");
        expect(await widgetStyle(page, "dialog", "background-color")).toBe("rgb(255, 255, 255)");
        expect(await page.evaluate(() => getComputedStyle(document.getElementById("feedback")!).color)).toBe(
          "rgb(128, 0, 0)",
        );
        expect(await seriousViolations(page)).toEqual([]);

        await page.keyboard.press("Tab");
        await page.keyboard.press("Tab");
        await page.keyboard.press("Enter");
        const thanks = page.getByRole("dialog", { name: "Thank you!" });
        await thanks.getByRole("heading", { name: "Thank you!" }).waitFor();
        expect(await thanks.getByRole("status").innerText()).toBe("Your feedback was sent.");
        expect(await focusedInWidget(page)).toBe("Close");
        await page.keyboard.press("Enter");
        await page.waitForFunction(() => !document.querySelector("[data-signalboard-feedback]"));
        expect(await page.evaluate(() => document.activeElement?.id)).toBe("feedback");
      },
      { viewport: { width: 375, height: 700 } },
    );
    const [sent] = await eventually(async () => {
      const found = await feedback();
      if (!found.length) throw new Error("no feedback yet");
      return found;
    });
    expect(sent).toMatchObject({
      channel: "feedback",
      event: "Feedback",
      icon: "💬",
      description: "The export button is hard to find.",
      user_id: "user-42",
    });
    expect(sent!.tags).toEqual({ username: "john.doe", beta: true, email: "ann@example.com" });
  });

  test("in dark mode, with the mouse: dark colours, and Escape closes it with nothing sent", async () => {
    await withPage(
      browser,
      "feedback-dark",
      async (page) => {
        await open(page, "/dark", button({ token, project: "shop", channel: "feedback" }));
        await page.click("#feedback");
        const dialog = page.getByRole("dialog", { name: "Send feedback" });
        await dialog.waitFor();
        expect(await widgetStyle(page, "dialog", "background-color")).toBe("rgb(24, 24, 27)");
        expect(await widgetStyle(page, "dialog", "color")).toBe("rgb(244, 244, 245)");
        expect(await widgetStyle(page, "textarea", "background-color")).toBe("rgb(39, 39, 42)");
        expect(await seriousViolations(page)).toEqual([]);
        await page.keyboard.type("Never mind");
        await page.keyboard.press("Escape");
        await page.waitForFunction(() => !document.querySelector("[data-signalboard-feedback]"));
        expect(await page.evaluate(() => document.activeElement?.id)).toBe("feedback");
      },
      { colorScheme: "dark", viewport: { width: 375, height: 700 } },
    );
    expect((await feedback()).some((e) => e.description === "Never mind")).toBe(false);
  });

  test("errors show in the widget, and nothing is thrown into the page", async () => {
    await withPage(browser, "feedback-errors", async (page) => {
      const buttons = [
        button({ token, project: "elsewhere", channel: "feedback" }, "Wrong project"),
        button({ token: revoked, project: "shop" }, "Revoked"),
        button({ token, project: "shop", channel: "support" }, "Other channel"),
        button({ project: "shop" }, "No token"),
      ].map((b, i) => b.replace('id="feedback"', `id="b${i}"`));
      await open(page, "/errors", buttons.join(" "));
      const attempt = async (id: string) => {
        await page.click(`#${id}`);
        const dialog = page.getByRole("dialog", { name: "Send feedback" });
        await dialog.getByRole("textbox", { name: "Your feedback" }).fill("Something");
        await dialog.getByRole("button", { name: "Send" }).click();
        const alert = dialog.getByRole("alert");
        await page.waitForFunction(
          () =>
            (document.querySelector("[data-signalboard-feedback]")?.shadowRoot?.querySelector("[role=alert]")
              ?.textContent ?? "") !== "",
        );
        const text = await alert.innerText();
        // The form stays, so the visitor can try again or cancel.
        expect(await dialog.getByRole("button", { name: "Send" }).isEnabled()).toBe(true);
        await dialog.getByRole("button", { name: "Cancel" }).click();
        await page.waitForFunction(() => !document.querySelector("[data-signalboard-feedback]"));
        return text;
      };
      expect(await attempt("b0")).toBe(
        'Your feedback could not be sent. This public token may only send to project "shop", not "elsewhere".',
      );
      expect(await attempt("b1")).toStartWith("Your feedback could not be sent. This token was revoked.");
      expect(await attempt("b2")).toBe(
        'Your feedback could not be sent. This public token may only send events to channel "feedback" of project "shop", not "support".',
      );
      expect(await attempt("b3")).toBe("This feedback button has no data-logsnag-token or data-logsnag-project.");
      // The server out of reach.
      await page.route(`${server.url}/v1/log`, (route) => route.abort("connectionrefused"));
      expect(await attempt("b0")).toBe(
        "Your feedback could not be sent. The feedback server could not be reached. Check your connection and try again.",
      );
    });
    expect((await feedback()).filter((e) => e.description === "Something")).toEqual([]);
  });

  test("a button added after the script loaded works too, and a button inside a form does not submit it", async () => {
    await withPage(browser, "feedback-later", async (page) => {
      await open(page, "/later", "");
      await page.evaluate(
        ([t]) => {
          const form = document.createElement("form");
          form.action = "/submitted";
          const b = document.createElement("button");
          b.id = "late";
          b.textContent = "Feedback";
          for (const [k, v] of Object.entries({ feedback: "", token: t!, project: "shop", "user-id": "late-user" }))
            b.setAttribute(`data-logsnag-${k}`, v);
          form.append(b);
          document.body.append(form);
        },
        [token],
      );
      await page.click("#late");
      const dialog = page.getByRole("dialog", { name: "Send feedback" });
      await dialog.getByRole("textbox", { name: "Your feedback" }).fill("Added later");
      await dialog.getByRole("button", { name: "Send" }).click();
      await page.getByRole("dialog", { name: "Thank you!" }).waitFor();
      expect(new URL(page.url()).pathname).toBe("/later");
      // It closes by itself after a moment.
      await page.waitForFunction(() => !document.querySelector("[data-signalboard-feedback]"), undefined, {
        timeout: STEP_TIMEOUT,
      });
    });
    expect(site.requests).not.toContain("/submitted");
    const sent = (await feedback()).find((e) => e.description === "Added later");
    expect(sent).toMatchObject({ channel: "feedback", user_id: "late-user", tags: {} });
  });
});
