// Looking after the data: online backup and restore, export and import, retention, big deletes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { SqliteStore } from "../../src/store/sqlite/index.ts";
import { project as projectCommand } from "../../src/cli/project.ts";
import { post, signedIn, startTestServer, tempDir, type TestServer, withDatabase } from "../helpers.ts";
import { PROGRAM, lastLine, newToken, run, serve, start } from "./process.ts";

describe("backup and restore", () => {
  test("a backup taken while the server takes writes is consistent, and restoring it brings the data back", async () => {
    const dataDir = tempDir();
    const token = await newToken(dataDir, "b");
    const server = await serve(PROGRAM, ["--data-dir", dataDir]);
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const send = (i: number) =>
      fetch(`${server.url}/v1/log`, {
        method: "POST",
        headers,
        body: JSON.stringify({ project: "default", channel: "backup", event: `e${i}`, tags: { n: i } }),
      });
    for (let i = 0; i < 200; i++) expect((await send(i)).status).toBe(200);

    // Keep writing while the backup runs.
    let writing = true;
    const writer = (async () => {
      for (let i = 200; writing; i++) await send(i);
    })();
    const file = join(tempDir(), "backup.db");
    const backup = await run(PROGRAM, ["backup", file, "--data-dir", dataDir]);
    writing = false;
    await writer;
    expect(backup.code).toBe(0);
    expect(lastLine(backup.stdout)).toBe(file);

    const { integrity, events, tags } = withDatabase(file, (copy) => ({
      integrity: copy.query("PRAGMA integrity_check").get(),
      events: (copy.query("SELECT count(*) AS n FROM events").get() as { n: number }).n,
      tags: (copy.query("SELECT count(*) AS n FROM event_tags").get() as { n: number }).n,
    }));
    expect(integrity).toEqual({ integrity_check: "ok" });
    expect(events).toBeGreaterThanOrEqual(200);
    expect(tags).toBe(events); // one tag each: the copy is one moment, never half a batch
    expect((await run(PROGRAM, ["backup", file, "--data-dir", dataDir])).code).toBe(2); // no overwriting by accident

    // Restore, as README.md says: stop, replace the database (and drop its -wal/-shm), start.
    expect(await server.stop()).toBe(0);
    const db = join(dataDir, "signalboard.db");
    for (const suffix of ["-wal", "-shm"]) rmSync(db + suffix, { force: true });
    copyFileSync(file, db);
    const restored = await serve(PROGRAM, ["--data-dir", dataDir]);
    const list = await fetch(`${restored.url}/v1/events?project=default&channel=backup&limit=1`, { headers }).then(
      (r) => r.json(),
    );
    expect(list.events[0].event).toBe(`e${events - 1}`);
    await restored.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
});

describe("a backup never costs data", () => {
  let server: TestServer;
  const count = (file: string) =>
    withDatabase(file, (db) => {
      expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      return (db.query("SELECT count(*) AS n FROM events").get() as { n: number }).n;
    });
  // A database of a few MB, so that a backup of it runs into a file size limit (below).
  const addEvents = async (n: number) => {
    const store = server.store as SqliteStore;
    const project = (await store.projects.findByName("default"))!;
    const channel = (await store.projects.ensureChannel(project.id, "bulk", Date.now())).id;
    await store.tx(async (tx) => {
      for (let i = 0; i < n; i++)
        await tx.events.insert({
          projectId: project.id,
          project: "default",
          channelId: channel,
          channel: "bulk",
          name: `e${i}`,
          description: "x".repeat(300),
          icon: null,
          notify: false,
          parser: "text",
          userId: null,
          tags: { i },
          ts: Date.now() - i,
          receivedAt: Date.now(),
          historical: false,
        });
    });
    return (store.sqlite.query("SELECT count(*) AS n FROM events").get() as { n: number }).n;
  };
  // RLIMIT_FSIZE binds root too (chmod would not): a write past it fails with EFBIG (Bun ignores SIGXFSZ).
  const backupWithin1MB = (file: string) =>
    run(
      ["sh", "-c", 'ulimit -f 2048 && exec "$@"', "sh", ...PROGRAM],
      ["backup", file, "--force", "--data-dir", server.dataDir],
    );

  beforeAll(async () => {
    server = await startTestServer();
    await addEvents(15_000);
  });
  afterAll(() => server.close());

  test("--force over an older backup keeps it until the new one is complete, and a failed backup leaves it as it was", async () => {
    const dir = tempDir();
    const file = join(dir, "nightly.db");
    expect((await run(PROGRAM, ["backup", file, "--data-dir", server.dataDir])).code).toBe(0);
    const before = count(file);
    const total = await addEvents(1000);

    const failed = await backupWithin1MB(file);
    expect(count(file)).toBe(before);
    expect(readdirSync(dir)).toEqual(["nightly.db"]); // the temporary file went too
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("was left as it was");

    const fresh = join(dir, "never.db");
    expect((await backupWithin1MB(fresh)).code).toBe(1);
    expect(readdirSync(dir)).toEqual(["nightly.db"]); // not even an empty database under the name

    const replaced = await run(PROGRAM, ["backup", file, "--force", "--data-dir", server.dataDir]);
    expect(replaced.code).toBe(0);
    expect(count(file)).toBe(total);
    expect(readdirSync(dir)).toEqual(["nightly.db"]);
    rmSync(dir, { recursive: true, force: true });
  });

  test("the live database and the files beside it are refused as a target, however they are named", async () => {
    const own = await startTestServer();
    const { dataDir } = own;
    const link = join(tempDir(), "data");
    symlinkSync(dataDir, link);
    try {
      for (let i = 0; i < 20; i++)
        expect((await post(own, "/v1/log", { project: "default", channel: "c", event: `e${i}` })).status).toBe(200);
      const targets = [
        join(dataDir, "signalboard.db"),
        `${dataDir}/../${basename(dataDir)}/signalboard.db`,
        join(link, "signalboard.db"),
        join(dataDir, "signalboard.db-wal"),
        join(dataDir, "signalboard.db-shm"),
        join(link, "search.db"),
      ];
      for (const target of targets) {
        const refused = await run(PROGRAM, ["backup", target, "--force", "--data-dir", dataDir]);
        expect(refused.code, target).toBe(2);
        expect(refused.stderr).toMatch(/is (the live database|one of the live database's files)/);
      }
      // Acknowledged after the attempts: it must be in the file the next start reads.
      expect((await post(own, "/v1/log", { project: "default", channel: "c", event: "last" })).status).toBe(200);
    } finally {
      await own.stop();
    }
    expect(count(join(dataDir, "signalboard.db"))).toBe(21);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(link, { force: true });
  });
});

describe("export and import", () => {
  test("a project's events go out as NDJSON and come back as historical events, without notifications", async () => {
    const from = await startTestServer();
    await from.services.projects.create("old");
    const sent = [];
    for (let i = 0; i < 5; i++)
      sent.push(
        (
          await post(from, "/v1/log", {
            project: "old",
            channel: i % 2 ? "a" : "b",
            event: `Event ${i}`,
            description: `**d${i}**`,
            parser: "markdown",
            icon: "🚀",
            tags: { i, even: i % 2 === 0 },
            user_id: `u${i}`,
            notify: true,
            timestamp: 1_700_000_000 + i,
          })
        ).json,
      );
    const file = join(tempDir(), "old.ndjson");
    const out = await run(PROGRAM, ["export", "--project", "old", "--out", file, "--data-dir", from.dataDir]);
    expect(out.code).toBe(0);
    const lines = (await Bun.file(file).text()).trim().split("\n");
    expect(lines).toHaveLength(5);
    expect(JSON.parse(lines[0]!)).toMatchObject({ project: "old", event: "Event 0", timestamp: 1_700_000_000 });

    const to = await startTestServer();
    try {
      const imported = await run(PROGRAM, ["import", file, "--project", "new", "--data-dir", to.dataDir]);
      expect(imported.code).toBe(0);
      expect(imported.stdout).toContain("Imported 5 events");
      const list = await fetch(`${to.url}/v1/events?project=new`, {
        headers: { Authorization: `Bearer ${to.token}` },
      }).then((r) => r.json());
      expect(list.events.map((e: { event: string }) => e.event)).toEqual([
        "Event 4",
        "Event 3",
        "Event 2",
        "Event 1",
        "Event 0",
      ]);
      expect(list.events[4]).toMatchObject({
        channel: "b",
        description: "**d0**",
        parser: "markdown",
        icon: "🚀",
        tags: { i: 0, even: true },
        user_id: "u0",
        timestamp: 1_700_000_000,
        historical: true,
      });
      expect(await to.store.notifications.deliveriesFor("push", [1, 2, 3])).toEqual([]);
      // A file with a bad line imports nothing and says which line.
      await Bun.write(
        file,
        `${lines[0]}\n{"project":"new","channel":"Bad Channel","event":"x","timestamp":1}\nnot json\n`,
      );
      const bad = await run(PROGRAM, ["import", file, "--data-dir", to.dataDir]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain("line 2");
      expect(bad.stderr).toContain("line 3");
    } finally {
      await from.close();
      await to.close();
    }
  });
});

describe("export's file", () => {
  test("never the live database, never an existing file without --force, and only ever complete", async () => {
    const server = await startTestServer();
    try {
      await post(server, "/v1/log", { project: "default", channel: "a", event: "kept" });
      const dir = server.dataDir;
      const exportTo = (out: string, ...more: string[]) =>
        run(PROGRAM, ["export", "--project", "default", "--out", out, "--data-dir", dir, ...more]);
      for (const target of [
        join(dir, "signalboard.db"),
        join(dir, "signalboard.db-wal"),
        join(dir, "..", basename(dir), "signalboard.db"),
      ]) {
        const refused = await exportTo(target, "--force");
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain("live database");
      }
      const list = await fetch(`${server.url}/v1/events?project=default`, {
        headers: { Authorization: `Bearer ${server.token}` },
      }).then((r) => r.json());
      expect(list.events.map((e: { event: string }) => e.event)).toEqual(["kept"]);

      const file = join(tempDir(), "out.ndjson");
      writeFileSync(file, "precious\n");
      const existing = await exportTo(file);
      expect(existing.code).toBe(2);
      expect(existing.stderr).toContain("already exists");
      const unknown = await run(PROGRAM, ["export", "--project", "nope", "--out", file, "--force", "--data-dir", dir]);
      expect(unknown.code).not.toBe(0);
      expect(await Bun.file(file).text()).toBe("precious\n"); // a failed export leaves it as it was
      const replaced = await exportTo(file, "--force");
      expect(replaced.code).toBe(0);
      expect(JSON.parse((await Bun.file(file).text()).trim())).toMatchObject({ event: "kept" });
      expect(statSync(file).mode & 0o077).toBe(0);
      expect(readdirSync(dirname(file)).filter((f) => f.includes("partial"))).toEqual([]);

      // --force replaces a file, nothing else: a directory, a symlink (to a file or a device) is refused, and nothing is left behind.
      const other = tempDir();
      const kept = join(other, "kept.txt");
      writeFileSync(kept, "kept\n");
      symlinkSync(kept, join(other, "link"));
      symlinkSync("/dev/null", join(other, "null"));
      for (const target of [other, join(other, "link"), join(other, "null")]) {
        const refused = await exportTo(target, "--force");
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain("not a regular file");
      }
      expect(await Bun.file(kept).text()).toBe("kept\n");
      expect(readdirSync(other).sort()).toEqual(["kept.txt", "link", "null"]);
      expect(readdirSync(dirname(other)).filter((f) => f.includes("partial"))).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe("an import is safe to run again", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  const count = (project: string) =>
    (
      (server.store as SqliteStore).sqlite
        .query("SELECT count(*) AS n FROM events WHERE project_id = (SELECT id FROM projects WHERE name = ?)")
        .get(project) as { n: number }
    ).n;
  const distinct = (project: string) =>
    (
      (server.store as SqliteStore).sqlite
        .query(
          "SELECT count(DISTINCT event) AS n FROM events WHERE project_id = (SELECT id FROM projects WHERE name = ?)",
        )
        .get(project) as { n: number }
    ).n;
  const ndjson = (events: object[]) => events.map((e) => JSON.stringify(e)).join("\n") + "\n";
  const importFile = (file: string) => run(PROGRAM, ["import", file, "--data-dir", server.dataDir]);

  test("importing a file twice, or a part of it and then all of it, stores each event once", async () => {
    const at = 1_700_000_000;
    const events = [
      {
        project: "twice",
        channel: "a",
        event: "Signed up",
        tags: { plan: "pro", seats: 3 },
        user_id: "u1",
        timestamp: at,
      },
      // The same time, other content: a different event.
      {
        project: "twice",
        channel: "a",
        event: "Signed up",
        tags: { plan: "pro", seats: 4 },
        user_id: "u1",
        timestamp: at,
      },
      {
        project: "twice",
        channel: "a",
        event: "Signed up",
        description: "again",
        tags: { plan: "pro", seats: 3 },
        user_id: "u1",
        timestamp: at,
      },
      // The same content and time in another channel: a different event too.
      {
        project: "twice",
        channel: "b",
        event: "Signed up",
        tags: { plan: "pro", seats: 3 },
        user_id: "u1",
        timestamp: at,
      },
      {
        project: "twice",
        channel: "a",
        event: "Paid",
        icon: "💰",
        parser: "markdown",
        description: "**9 €**",
        timestamp: at + 0.5,
      },
    ];
    const dir = tempDir();
    const file = join(dir, "twice.ndjson");
    await Bun.write(file, ndjson(events.slice(0, 2)));
    const part = await importFile(file);
    expect(count("twice")).toBe(2);
    await Bun.write(file, ndjson(events));
    const all = await importFile(file);
    expect(count("twice")).toBe(5);
    const again = await importFile(file);
    expect(count("twice")).toBe(5);
    expect(part.stdout).toContain(
      "Imported 2 events as historical events (no notifications); skipped 0 already present.",
    );
    expect(all.code).toBe(0);
    expect(all.stdout).toContain(
      "Imported 3 events as historical events (no notifications); skipped 2 already present.",
    );
    expect(again.stdout).toContain(
      "Imported 0 events as historical events (no notifications); skipped 5 already present.",
    );
    // Tags written in another order are the same content.
    await Bun.write(file, ndjson([{ ...events[0], tags: { seats: 3, plan: "pro" } }]));
    await importFile(file);
    expect(count("twice")).toBe(5);
    rmSync(dir, { recursive: true, force: true });
  });

  test("an event the file holds twice is stored twice, and no more on the next run", async () => {
    const dir = tempDir();
    const file = join(dir, "dup.ndjson");
    const event = { project: "dup", channel: "a", event: "Page viewed", timestamp: 1_700_000_000 };
    await Bun.write(file, ndjson([event, event]));
    await importFile(file);
    expect(count("dup")).toBe(2);
    const again = await importFile(file);
    expect(count("dup")).toBe(2);
    expect(again.stdout).toContain(
      "Imported 0 events as historical events (no notifications); skipped 2 already present.",
    );
    rmSync(dir, { recursive: true, force: true });
  });

  test("exporting a project and importing the file back into the same instance adds nothing", async () => {
    await server.services.projects.create("shop");
    for (let i = 0; i < 10; i++) {
      const body = {
        project: "shop",
        channel: i % 2 ? "orders" : "refunds",
        event: `Order ${i}`,
        description: `**${i}**`,
        parser: "markdown",
        icon: "🛒",
        tags: { n: i, big: i > 5 },
        user_id: `u${i}`,
        notify: true,
      };
      expect(
        (await post(server, "/v1/log", i < 5 ? body : { ...body, timestamp: 1_700_000_000 + i / 1000 })).status,
      ).toBe(200);
    }
    const file = join(tempDir(), "shop.ndjson");
    expect(
      (await run(PROGRAM, ["export", "--project", "shop", "--out", file, "--data-dir", server.dataDir])).code,
    ).toBe(0);
    const back = await importFile(file);
    expect(count("shop")).toBe(10);
    expect(back.code).toBe(0);
    expect(back.stdout).toContain(
      "Imported 0 events as historical events (no notifications); skipped 10 already present.",
    );
    rmSync(file, { force: true });
  });

  test("an import killed part-way and run again ends with one copy of each event", async () => {
    const total = 50_000;
    const dir = tempDir();
    const file = join(dir, "big.ndjson");
    await Bun.write(
      file,
      ndjson(
        Array.from({ length: total }, (_, i) => ({
          project: "big",
          channel: `c${i % 3}`,
          event: `e${i}`,
          tags: { i },
          timestamp: 1_700_000_000 + i / 100,
        })),
      ),
    );
    const proc = start(PROGRAM, ["import", file, "--data-dir", server.dataDir]);
    // Killed as soon as the first batches are on disk.
    const started = (server.store as SqliteStore).sqlite.query(
      "SELECT count(*) AS n FROM events WHERE project_id = (SELECT id FROM projects WHERE name = 'big')",
    );
    while ((started.get() as { n: number }).n === 0 && proc.exitCode === null) await Bun.sleep(2);
    proc.kill("SIGKILL");
    await proc.exited;
    const stored = count("big");
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(total); // it was cut short, or this test proves nothing
    const resumed = await importFile(file);
    expect(count("big")).toBe(total);
    expect(distinct("big")).toBe(total);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain("run the same command again");
    expect(resumed.stdout).toContain(
      `Imported ${total - stored} events as historical events (no notifications); skipped ${stored} already present.`,
    );
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("retention and deletion", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  test("a project with a retention period loses its older events, and only those", async () => {
    await server.services.projects.create("short");
    const now = Math.floor(Date.now() / 1000);
    for (const days of [10, 5, 1, 0])
      await post(server, "/v1/log", {
        project: "short",
        channel: "c",
        event: `${days} days old`,
        tags: { d: days },
        ...(days ? { timestamp: now - days * 86400 } : {}),
      });
    await server.services.projects.setRetention("short", 3);
    expect(await server.services.projects.pruneExpired()).toBe(2);
    const list = await fetch(`${server.url}/v1/events?project=short`, {
      headers: { Authorization: `Bearer ${server.token}` },
    }).then((r) => r.json());
    expect(list.events.map((e: { event: string }) => e.event)).toEqual(["0 days old", "1 days old"]);
    // Their tags went with them: a tag search finds only the survivors.
    const tagged = await fetch(`${server.url}/v1/events?project=short&tag=d:10`, {
      headers: { Authorization: `Bearer ${server.token}` },
    }).then((r) => r.json());
    expect(tagged.events).toEqual([]);
    expect(await server.services.projects.setRetention("short", null)).toMatchObject({ retentionDays: null });
    await expect(server.services.projects.setRetention("short", 0)).rejects.toThrow(/days/);
  });

  test("the CLI sets retention", async () => {
    const res = await run(PROGRAM, ["project", "retention", "default", "30", "--data-dir", server.dataDir]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("30 days");
    expect((await run(PROGRAM, ["project", "retention", "default", "soon", "--data-dir", server.dataDir])).code).toBe(
      2,
    );
  });

  test("docs/operations.md says where retention is set, in the words the settings page and the CLI use", async () => {
    const doc = readFileSync(join(import.meta.dir, "../../docs/operations.md"), "utf8");
    const paragraph = /\*\*Retention\*\*[^]*?\n\n/.exec(doc)![0].replace(/\s+/g, " ");
    // The page it names, and the field's label there, word for word.
    const owner = { username: "docs-owner", password: "correct horse battery staple" };
    await server.services.accounts.createUser(owner, "owner");
    const page = await (await (await signedIn(server, owner)).request("/p/default/settings")).text();
    const label = /<label for="retention-days">([^<]+)<\/label>/.exec(page)![1]!;
    expect(paragraph).toContain("`/p/PROJECT/settings`");
    expect(paragraph).toContain(`*${label}*`);
    // The command as the CLI's usage has it, and what the example prints.
    expect(projectCommand.usage).toContain("project retention NAME [DAYS|off]");
    expect(paragraph).toContain("`signalboard project retention NAME [DAYS|off]`");
    const example = /`signalboard (project retention \S+ \d+)`/.exec(paragraph)![1]!.split(" ");
    const res = await run(PROGRAM, [
      ...example.map((word) => (word === "shop" ? "default" : word)),
      "--data-dir",
      server.dataDir,
    ]);
    expect(res.code).toBe(0);
    const said = res.stdout.trim().replace('"default"', '"shop"');
    expect(paragraph).toContain(said);
  });

  test("deleting a channel with many events happens in batches and leaves nothing behind", async () => {
    await server.services.projects.create("big");
    const store = server.store as SqliteStore;
    const project = (await store.projects.findByName("big"))!;
    const channel = (await store.projects.ensureChannel(project.id, "many", Date.now())).id;
    await store.tx(async (tx) => {
      for (let i = 0; i < 5000; i++)
        await tx.events.insert({
          projectId: project.id,
          project: "big",
          channelId: channel,
          channel: "many",
          name: "e",
          description: null,
          icon: null,
          notify: false,
          parser: "text",
          userId: null,
          tags: { k: i % 3 },
          ts: Date.now() - i,
          receivedAt: Date.now(),
          historical: false,
        });
    });
    await post(server, "/v1/log", { project: "big", channel: "kept", event: "survivor", tags: { k: 1 } });
    const batchesBefore = store.writer.stats.batches;
    await server.services.projects.deleteChannel("big", "many");
    expect(store.writer.stats.batches - batchesBefore).toBeGreaterThanOrEqual(3);
    expect(await store.projects.countEvents({ projectId: project.id })).toBe(1);
    expect(
      (store.sqlite.query("SELECT count(*) AS n FROM event_tags WHERE project_id = ?").get(project.id) as { n: number })
        .n,
    ).toBe(1);
  });
});
