// Roles, project limits and token names from the shell, as a user types the commands, in a
// data directory of its own; what they do is in the audit trail, by "command line".
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { loadConfig } from "../../src/config.ts";
import { createServices } from "../../src/services.ts";
import { databaseFile, tempDir, withDatabase } from "../helpers.ts";
import { PROGRAM, run } from "./process.ts";

let dataDir: string;
const cli = (...args: string[]) => run(PROGRAM, [...args, "--data-dir", dataDir]);

beforeAll(async () => {
  dataDir = tempDir();
  // The database, as a server that ran there left it: with a project besides the default.
  const services = await createServices(loadConfig({ "data-dir": dataDir }, {}));
  await services.projects.create("shop");
  await services.projects.create("blog");
  await services.close();
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("signalboard user", () => {
  test("create takes a role and projects; set changes them; list shows them", async () => {
    expect((await cli("user", "create", "boss")).stdout).toContain('Created owner "boss"');
    const vera = await cli("user", "create", "vera", "--role", "viewer", "--projects", "shop");
    expect(vera.code).toBe(0);
    expect(vera.stdout).toContain('Created viewer "vera", seeing shop.');
    expect((await cli("user", "create", "max")).stdout).toContain('Created member "max", seeing all projects.');
    expect((await cli("user", "list")).stdout).toMatch(/vera\s+viewer\s+shop/);
    const set = await cli("user", "set", "vera", "--role", "admin", "--all-projects");
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('"vera" is now admin, seeing all projects.');
    expect((await cli("user", "set", "max", "--projects", "shop,blog")).stdout).toContain(
      '"max" is now member, seeing blog,shop.',
    );
  });

  test("refusals say why: an unknown role or project, the owner's role, nothing to change", async () => {
    const role = await cli("user", "create", "carol", "--role", "superuser");
    expect(role.code).toBe(2);
    expect(role.stderr).toContain('error: --role must be admin, member or viewer, not "superuser"');
    // The usage line under it offers the same roles, from the same list.
    const offered = /\[--owner \| --role ([a-z|]+)\]/.exec(role.stderr)?.[1];
    expect(offered).toBe("admin|member|viewer");
    expect((await cli("user", "--help")).stdout).toContain("--role admin|member|viewer");
    // An owner is made with --owner, as the usage line says; --role owner points there.
    const owner2 = await cli("user", "create", "eve", "--role", "owner");
    expect(owner2.code).toBe(2);
    expect(owner2.stderr).toContain(
      '--role must be admin, member or viewer, not "owner" (an owner is made with --owner)',
    );
    const project = await cli("user", "set", "vera", "--projects", "nope");
    expect(project.code).toBe(2);
    expect(project.stderr).toContain('there is no project named "nope"');
    const owner = await cli("user", "set", "boss", "--role", "viewer");
    expect(owner.code).toBe(1);
    expect(owner.stderr).toContain("The owner's role and projects cannot change");
    expect((await cli("user", "set", "vera")).code).toBe(2);
    expect((await cli("user", "set", "vera", "--projects", "shop", "--all-projects")).code).toBe(2);
  });
});

describe("signalboard token", () => {
  test("a name a live token has is refused with a message, so revoke NAME always names one", async () => {
    expect((await cli("token", "create", "--name", "laptop")).code).toBe(0);
    const again = await cli("token", "create", "--name", "laptop");
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('A token named "laptop" already exists. Choose another name');
    expect((await cli("token", "revoke", "laptop")).code).toBe(0);
    expect((await cli("token", "create", "--name", "laptop")).code).toBe(0);
  });

  test("--projects limits a full-access token to some projects", async () => {
    const made = await cli("token", "create", "--name", "shop reader", "--projects", "shop");
    expect(made.stdout).toContain("(full access to shop)");
    expect((await cli("token", "list")).stdout).toMatch(/shop reader\s+full\s+shop/);
  });

  test("what the shell did is in the audit trail, done by the command line (and not logged: the command says what it did)", async () => {
    const made = await cli("token", "create", "--name", "quiet");
    expect(made.stderr).toBe("");
    const trail = withDatabase(databaseFile(dataDir), (db) =>
      db
        .query<{ action: string; actor: string; subject: string }, []>(
          "SELECT action, actor, subject FROM audit_log ORDER BY id",
        )
        .all(),
    );
    expect(trail.every((e) => e.actor === "command line")).toBe(true);
    expect(trail.map((e) => e.action)).toEqual([
      "owner.created",
      "member.added",
      "member.added",
      "member.changed",
      "member.changed",
      "token.created",
      "token.revoked",
      "token.created",
      "token.created",
      "token.created",
    ]);
  });
});
