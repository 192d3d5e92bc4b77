// The smaller things a user meets: no Content-Security-Policy violation across every page and its
// htmx actions, one toast per failed request, stale set-up links, blocked links and quotes in
// markdown, an integration's status after "Send test", the product's name on the sign-in page, no
// deprecated meta tags, and a historical event's mark that does not pass for a tag.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { startTestServer } from "../helpers.ts";
import {
  CHROMIUM,
  describeBrowser,
  launch,
  ok,
  OWNER,
  path,
  sendEvent,
  sendMetric,
  serverPool,
  signIn,
  STEP_TIMEOUT,
  withPage,
} from "./browser.ts";

let browser: Browser;
beforeAll(async () => {
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

/** A local receiver for integrations: answers every request with `status`. */
function receiver(status: number) {
  const hits: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      hits.push(await request.text());
      return new Response(status === 204 ? null : "nope", { status });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, hits, stop: () => server.stop(true) };
}

/** Records every securitypolicyviolation event of every document the page loads, and console warnings. */
async function watchPolicy(page: Page): Promise<{ violations: () => Promise<string[]>; warnings: string[] }> {
  const seen: string[] = [];
  const warnings: string[] = [];
  await page.exposeFunction("__reportViolation", (text: string) => seen.push(text));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) =>
      (window as any).__reportViolation(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`),
    );
  });
  page.on("console", (message) => {
    if (message.type() === "warning" || message.type() === "error") warnings.push(message.text());
    if (/Content Security Policy|Refused to/i.test(message.text())) seen.push(`console: ${message.text()}`);
  });
  return { violations: async () => seen, warnings };
}

describeBrowser("the Content-Security-Policy across every page and its htmx actions", () => {
  const pool = serverPool({ "notify-retry-base": "100ms", "outbound-allow": "127.0.0.1" }); // receivers on 127.0.0.1
  afterAll(() => pool.closeAll());

  test("a walk through every page, with its forms and swaps, raises no CSP violation (htmx never settles style attributes)", async () => {
    const server = await pool.withOwner();
    const hook = receiver(204);
    try {
      const event = await ok(
        sendEvent(server, {
          project: "default",
          channel: "payments",
          event: "Paid",
          parser: "markdown",
          description: "> quoted",
          user_id: "alice",
          tags: { plan: "pro" },
        }),
      );
      await ok(sendMetric(server, { title: "Signups", value: 1 }));
      await withPage(browser, "csp-walk", async (page) => {
        const policy = await watchPolicy(page);
        await signIn(page, server);
        for (const p of [
          "/p/default",
          "/p/default/c/payments",
          `/p/default/events/${event.id}`,
          "/p/default/users/alice",
          "/p/default/metrics/Signups",
          "/settings/notifications",
          "/docs",
        ]) {
          await page.goto(server.url + p);
          await page.waitForLoadState("load");
        }

        // Charts: the builder's preview swaps as the form changes, a save, the dashboard's moves.
        await page.goto(server.url + "/p/default/charts/new");
        await page.fill("#chart-name", "Paid by plan");
        await page.selectOption("#chart-group", "tag");
        await page.fill("#chart-group-tag", "plan");
        await page.locator("#chart-group-tag").blur();
        await page.locator("#chart-preview .chart-legend li").first().waitFor();
        await page.click("[data-testid=save-chart]");
        await page.waitForURL(/\/charts\/\d+$/);
        await page.locator("[data-testid=card-body] canvas").waitFor();
        await page.goto(server.url + "/p/default");
        await page.click("[data-testid=arrange]");
        await page.getByRole("button", { name: "Move up: Paid by plan" }).click();
        await page
          .locator("#dashboard-cards > li")
          .first()
          .and(page.locator("[data-card]:not(#card-activity)"))
          .waitFor();
        await page.locator("#dashboard-cards canvas").first().waitFor();

        // The sidebar's "+": checked as you type, refused on submit (a 422 swap), created.
        await page.goto(server.url + "/p/default");
        await page.click("[data-testid=new-project]");
        await page.fill("#new-project-name", "Bad Name");
        await page.locator("#new-project-name-hint.error").waitFor();
        await page.evaluate(() => document.getElementById("new-project-name")!.setAttribute("data-before", ""));
        await page.click(".name-form button[type=submit]");
        // The form, swapped with its error and settled (htmx readies the new form's input as it settles).
        await page
          .locator("form.name-form:not(.htmx-added) > #new-project-name:not([data-before]) ~ .hint.error[role=alert]")
          .waitFor();
        await page.waitForFunction(() => !document.querySelector(".htmx-settling, .htmx-added"));
        await page.fill("#new-project-name", "second");
        await page.locator("#new-project-name-hint.ok").waitFor();
        await page.click(".name-form button[type=submit]");
        await page.waitForURL((url) => url.pathname === "/p/second");

        // Project settings: retention saved, the delete dialog opened and cancelled.
        await page.goto(server.url + "/p/second/settings");
        await page.fill("#retention-days", "7");
        await page.getByRole("button", { name: "Save" }).click();
        await page.getByText("Saved.").waitFor();
        await page.click("[data-testid=delete-project]");
        await page.locator("dialog.dialog[open]").waitFor();
        await page.getByRole("button", { name: "Cancel" }).click();
        await page.locator("dialog.dialog").waitFor({ state: "detached" });

        // Settings → API: a public token (the form and the table swap), Allow/Stop, the revoke dialog.
        // An element htmx swaps carries a style set from script (as an animation or a library would):
        // settling would copy it with setAttribute, which the policy refuses.
        await page.goto(server.url + "/settings/api");
        await page.fill("#token-name", "website");
        await page.check("input[name=kind][value=public]");
        await page.click("#token-create button[type=submit]");
        await page.locator("[data-testid=new-token-value]").waitFor();
        await page.locator("#token-table tr", { hasText: "website" }).waitFor();
        await page.evaluate(() => {
          document.getElementById("token-table")!.style.opacity = "0.99";
          document.getElementById("token-create")!.style.opacity = "0.99";
        });
        await page.click("[data-testid=notify-website]");
        await page.locator("[data-testid=notify-website]", { hasText: "Stop" }).waitFor();
        await page.fill("#token-name", "backend");
        await page.check("input[name=kind][value=full]");
        await page.click("#token-create button[type=submit]");
        await page.locator("#token-table tr", { hasText: "backend" }).waitFor();
        await page.click("[data-testid=revoke-backend]");
        await page.locator("dialog.dialog[open]").waitFor();
        await page.getByRole("button", { name: "Cancel" }).click();

        // Settings → Integrations: added (the list reloads itself), tested (its status updates itself).
        await page.goto(server.url + "/settings/integrations");
        const form = page.locator("#integration-create form");
        await form.locator("input[name=name]").fill("ops");
        await form.locator("input[name='webhook.url']").fill(`${hook.url}/hook`);
        // A template's preview is swapped in too.
        await form.locator("summary", { hasText: "Routing and template" }).click();
        await form.locator("textarea[name=template_body]").fill('{"text": "{{event}}"}');
        await form.locator("[data-testid=preview-template]").click();
        await form.locator("[data-testid=template-preview]").waitFor();
        await form.locator("button[type=submit]").click();
        await page.locator("[data-testid=webhook-secret]").waitFor();
        const item = page.locator("li[id^=integration-]", { hasText: "ops" });
        await item.waitFor();
        await page.evaluate(() => {
          for (const el of document.querySelectorAll<HTMLElement>("[id$=-outcome], [id^=integration-][id$=-status]"))
            el.style.opacity = "0.99";
        });
        await item.locator("[data-testid=test-integration]").click();
        await item
          .locator("[data-testid=integration-outcome]", { hasText: "Last delivered" })
          .waitFor({ timeout: STEP_TIMEOUT });

        // Settings → Members: a member added.
        await page.goto(server.url + "/settings/members");
        await page.fill("#member-username", "bob");
        await page.fill("#member-password", "bob's long password");
        await page.click("#member-form button[type=submit]");
        await page.locator("table.members tr", { hasText: "bob" }).waitFor();

        expect(await policy.violations()).toEqual([]);
      });
    } finally {
      hook.stop();
    }
  });
});

describeBrowser("toasts", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("one failed request is one toast, with the server's message; the same failure again does not stack a second", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "one-toast", async (page) => {
      await signIn(page, server);
      await page.goto(server.url + "/settings/api");
      const toasts = page.locator("#toasts .toast");
      const [token] = await server.services.tokens.list();

      // Refused by the server: revoked meanwhile, then "Revoke" confirmed.
      await page.click("[data-testid=revoke-test]");
      await page.locator("dialog.dialog[open]").waitFor();
      await server.services.tokens.revoke(String(token!.id));
      await page.locator("dialog [data-testid=confirm]").click();
      await toasts.filter({ hasText: "already revoked" }).waitFor();

      // A second, different failure is the marker that everything about the first has arrived.
      await page.route("**/settings/api/tokens/list", (route) => route.abort("connectionrefused"));
      const request = (url: string, target: string) =>
        page.evaluate(
          ([url, target]) => void (window as any).htmx.ajax("GET", url, { target, swap: "outerHTML" }).catch(() => {}),
          [url, target],
        );
      await request("/settings/api/tokens/list", "#token-table");
      await toasts.filter({ hasText: "Cannot reach the server" }).waitFor();
      expect(await toasts.allTextContents()).toEqual([
        expect.stringContaining("already revoked"),
        "Cannot reach the server. Check your connection.",
      ]);

      // The same network failure again, then a new marker: still one toast of each.
      await request("/settings/api/tokens/list", "#token-table");
      await request("/p/nowhere/delete", "#modal");
      await toasts.filter({ hasText: "nowhere" }).waitFor();
      expect(await toasts.count()).toBe(3);
      expect((await toasts.allTextContents()).filter((t) => t.startsWith("Cannot reach"))).toHaveLength(1);
      expect(await page.locator("#toasts .toast.error").count()).toBe(3);
    });
  });
});

describeBrowser("set-up links", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("a set-up link opened after the owner exists says it has expired and offers sign-in; a wrong code says so too", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "stale-setup", async (page) => {
      await page.goto(`${server.url}/setup?code=abcdefABCDEF123456789012`);
      expect(path(page)).toBe("/login");
      const notice = page.locator("[data-testid=stale-setup]");
      expect(await notice.textContent()).toContain("This set-up link has expired: it was already used");
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      await page.fill("#username", OWNER.username);
      await page.fill("#password", OWNER.password);
      await page.click("form button[type=submit]");
      await page.waitForURL((url) => url.pathname === "/p/default");

      // Without a code, the sign-in page says nothing about links.
      await page.context().clearCookies();
      await page.goto(`${server.url}/setup`);
      expect(path(page)).toBe("/login");
      expect(await notice.count()).toBe(0);
    });

    const fresh = pool.track(await startTestServer());
    await withPage(browser, "wrong-setup-code", async (page) => {
      const response = await page.goto(`${fresh.url}/setup?code=WRONG`);
      expect(response?.status()).toBe(403);
      expect(await page.locator("[data-testid=stale-setup]").textContent()).toContain(
        "This set-up link has expired or was already used",
      );
      await page.goto(`${fresh.url}/setup`);
      expect(await page.locator("[data-testid=stale-setup]").count()).toBe(0);
    });
  });

  test("the sign-in page shows the product's name", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "login-brand", async (page) => {
      await page.goto(server.url + "/login");
      const brand = page.locator("main .bare-brand");
      expect(await brand.textContent()).toBe("Signalboard");
      expect(await brand.isVisible()).toBe(true);
      expect(await brand.locator("img").evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(
        true,
      );
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
    });
  });
});

describeBrowser("markdown descriptions", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("a blocked javascript: link reads as plain text; a kept link is underlined; a quote is set off with a rule", async () => {
    const server = await pool.withOwner();
    await ok(
      sendEvent(server, {
        project: "default",
        channel: "md",
        event: "Notes",
        parser: "markdown",
        description:
          "See [the docs](https://example.com/docs) or [click me](javascript:alert(1)) now.\n\n> Quoted from the customer.",
      }),
    );
    await withPage(browser, "markdown-look", async (page) => {
      await signIn(page, server);
      const body = page.locator("#events .event-description.markdown");
      await body.waitFor();
      const look = await body.evaluate((root) => {
        const blocked = [...root.querySelectorAll("a")].find((a) => a.textContent === "click me")!;
        const kept = [...root.querySelectorAll("a")].find((a) => a.textContent === "the docs")!;
        const text = getComputedStyle(blocked.parentElement!);
        const b = getComputedStyle(blocked);
        const quote = getComputedStyle(root.querySelector("blockquote")!);
        return {
          blocked: {
            href: blocked.getAttribute("href"),
            sameColour: b.color === text.color,
            underline: b.textDecorationLine,
            cursor: b.cursor,
            link: blocked.matches(":any-link"),
          },
          kept: { href: kept.getAttribute("href"), underline: getComputedStyle(kept).textDecorationLine },
          quote: {
            border: parseFloat(quote.borderLeftWidth),
            marginLeft: parseFloat(quote.marginLeft),
            padding: parseFloat(quote.paddingLeft),
          },
        };
      });
      expect(look.blocked).toEqual({ href: null, sameColour: true, underline: "none", cursor: "auto", link: false });
      expect(look.kept).toEqual({ href: "https://example.com/docs", underline: "underline" });
      expect(look.quote.border).toBeGreaterThan(0);
      expect(look.quote.padding).toBeGreaterThan(0);
      expect(look.quote.marginLeft).toBeLessThan(16);
    });
  });
});

describeBrowser("an integration's status after Send test", () => {
  const pool = serverPool({ "notify-retry-base": "100ms", "outbound-allow": "127.0.0.1" }); // receivers on 127.0.0.1
  afterAll(() => pool.closeAll());

  test("the last result updates on the page by itself: delivered, or the receiver's error", async () => {
    const server = await pool.withOwner();
    const good = receiver(204);
    const bad = receiver(500);
    try {
      await server.services.integrations.create({
        project: "default",
        kind: "webhook",
        name: "good",
        config: { url: `${good.url}/hook` },
      });
      await server.services.integrations.create({
        project: "default",
        kind: "webhook",
        name: "bad",
        config: { url: `${bad.url}/hook` },
      });
      await withPage(browser, "integration-test-status", async (page) => {
        await signIn(page, server);
        await page.goto(server.url + "/settings/integrations");
        await page.evaluate(() => ((window as any).__notReloaded = true));
        const item = (name: string) => page.locator("li[id^=integration-]", { hasText: name });
        expect(await item("good").locator("[data-testid=integration-outcome]").textContent()).toContain(
          "Nothing delivered yet",
        );

        await item("good").locator("[data-testid=test-integration]").click();
        await item("good").locator("[role=status]", { hasText: "Test queued" }).waitFor();
        await item("good")
          .locator("[data-testid=integration-outcome]", { hasText: "Last delivered" })
          .waitFor({ timeout: STEP_TIMEOUT });
        await item("good").locator("[role=status]", { hasText: "Test delivered." }).waitFor();
        expect(good.hits).toHaveLength(1);

        await item("bad").locator("[data-testid=test-integration]").click();
        await item("bad").locator("[data-testid=last-error]").waitFor({ timeout: STEP_TIMEOUT });
        expect(await item("bad").locator("[data-testid=last-error]").textContent()).toContain("500");
        await item("bad").locator("[role=status]", { hasText: "Test failed" }).waitFor();
        expect(await page.evaluate(() => (window as any).__notReloaded)).toBe(true);
      });
    } finally {
      good.stop();
      bad.stop();
    }
  });

  test("the Add an integration form's fields and placeholders are in normal weight, as in other forms; only the labels are bold", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "integration-form-weight", async (page) => {
      await signIn(page, server);
      const weights = (selector: string) =>
        page.$$eval(selector, (fields) =>
          fields
            .filter((f) => (f as HTMLElement).offsetParent !== null)
            .map((f) => ({
              name: f.getAttribute("name"),
              field: getComputedStyle(f).fontWeight,
              placeholder: getComputedStyle(f, "::placeholder").fontWeight,
            })),
        );
      await page.goto(server.url + "/settings/integrations");
      const form = "section[aria-labelledby=new-integration] form";
      const fields = await weights(`${form} input:not([type=hidden]), ${form} select`);
      expect(fields.length).toBeGreaterThanOrEqual(3);
      for (const f of fields) expect(f, String(f.name)).toEqual({ name: f.name, field: "400", placeholder: "400" });
      expect(
        await page
          .locator(`${form} label`)
          .first()
          .evaluate((el) => getComputedStyle(el).fontWeight),
      ).toBe("600");
      // The same as the token form's fields.
      await page.goto(server.url + "/settings/api");
      expect((await weights("#token-name")).map((f) => f.field)).toEqual(["400"]);
    });
  });
});

describeBrowser("meta tags", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("no deprecated meta tag: Chromium warns about none on the sign-in page or a signed-in page", async () => {
    const server = await pool.withOwner();
    await withPage(browser, "meta-tags", async (page) => {
      const policy = await watchPolicy(page);
      await page.goto(server.url + "/login");
      await signIn(page, server);
      await page.locator(".live-status.live").waitFor();
      expect(await page.locator('meta[name="apple-mobile-web-app-capable"]').count()).toBe(0);
      expect(await page.locator('meta[name="mobile-web-app-capable"]').getAttribute("content")).toBe("yes");
      expect(policy.warnings.filter((w) => /deprecated/i.test(w))).toEqual([]);
    });
  });
});

describeBrowser("a historical event's mark", () => {
  const pool = serverPool();
  afterAll(() => pool.closeAll());

  test("is a note beside the channel, with a clock and words that say what it means, not a chip like the tags", async () => {
    const server = await pool.withOwner();
    await ok(
      sendEvent(server, {
        project: "default",
        channel: "imports",
        event: "Backfilled",
        tags: { historical: "no", env: "prod" },
        timestamp: Math.floor(Date.now() / 1000) - 3600,
      }),
    );
    await ok(sendEvent(server, { project: "default", channel: "imports", event: "Live one", tags: { env: "prod" } }));
    for (const colorScheme of ["light", "dark"] as const) {
      await withPage(
        browser,
        `historical-mark-${colorScheme}`,
        async (page) => {
          await signIn(page, server);
          for (const at of ["/p/default", "/p/default/c/imports"]) {
            await page.goto(server.url + at);
            const item = page.locator("li.event", { hasText: "Backfilled" });
            const mark = item.locator(".event-meta > *", { hasText: "historical" });
            expect(await mark.count()).toBe(1);
            expect(
              await page
                .locator("li.event", { hasText: "Live one" })
                .locator(".event-meta > *", { hasText: "historical" })
                .count(),
            ).toBe(0);
            // Among the event's details, not among its tags, and not a link.
            expect(
              await mark.evaluate((el) => !!el.closest(".event-meta") && !el.closest(".tags") && !el.closest("a")),
            ).toBe(true);
            // Drawn unlike a chip: no border, no fill, no pill; a clock hidden from screen readers beside the word.
            const look = (el: Element) => {
              const s = getComputedStyle(el);
              return { border: s.borderTopWidth, background: s.backgroundColor, radius: s.borderTopLeftRadius };
            };
            const chip = await item.locator("a.tag").first().evaluate(look);
            const own = await mark.evaluate(look);
            expect(chip.border).toBe("1px");
            expect(own).toEqual({ border: "0px", background: "rgba(0, 0, 0, 0)", radius: "0px" });
            expect(await mark.locator("[aria-hidden=true]").textContent()).toBe("🕓");
            expect(await mark.evaluate((el) => getComputedStyle(el).fontStyle)).toBe("italic");
            // What a screen reader reads: what it is and why, not a bare word.
            expect((await mark.textContent())!.replace("🕓", "")).toBe(
              "historical event: sent with a timestamp, shown at that time and never pushed",
            );
            expect(await mark.innerText()).toContain("historical");
          }
        },
        { colorScheme },
      );
    }
  });
});
