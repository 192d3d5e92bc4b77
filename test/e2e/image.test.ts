// The container image as an operator runs it (npm run image, then podman or docker): built from
// scratch with nothing but the binary, its libraries, CA certificates and time zone data; the
// server as a user of its own, its data in the volume /data, a token made with `exec`, an event
// kept across a restart, the HEALTHCHECK answering. And compose.yaml's two set-ups.
//
// Skipped, saying why, where neither podman nor docker can run containers. Hosts that refuse some
// of what a container asks for by default (a sandbox that may not set rlimits) can give the engine
// extra `run` arguments: SIGNALBOARD_TEST_CONTAINER_ARGS="--runtime runc --ulimit nofile=1024:1024".
// Every call to the engine has a time limit, so the test cannot hang.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import pkg from "../../package.json";
import { eventually, tempDir } from "../helpers.ts";
import { ROOT } from "./process.ts";

type Outcome = { code: number; stdout: string; stderr: string };

/** Runs a command for at most `seconds`; killed after that (code 124, as timeout(1) says). */
async function limited(argv: string[], seconds: number, env: Record<string, string> = {}): Promise<Outcome> {
  const proc = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe", stdin: "ignore", env: { ...process.env, ...env } });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, seconds * 1000);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  return { code: timedOut ? 124 : code, stdout, stderr: timedOut ? `${stderr}\n(killed after ${seconds} s)` : stderr };
}

/** podman or docker, whichever answers here (as npm run image picks). */
async function findEngine(): Promise<string | null> {
  for (const candidate of ["docker", "podman"]) {
    if (Bun.which(candidate) && (await limited([candidate, "info"], 30)).code === 0) return candidate;
  }
  return null;
}

const engine = await findEngine();
const tag = `signalboard-test:${process.pid}`;
const extra = (process.env.SIGNALBOARD_TEST_CONTAINER_ARGS ?? "").split(/\s+/).filter(Boolean);
// Host networking: the test reaches the server on a free port of its own choosing (PORT), with no
// port publishing (which needs more of the host than running a container does).
const runArgs = ["--network", "host", ...extra];

/** Why containers cannot run here, or null when they can: the image is built, and run once. */
let unavailable: string | null = engine ? null : "neither podman nor docker answers here (apt-get install -y podman)";
let buildSeconds = 0;
if (engine) {
  const started = performance.now();
  const built = await limited(
    [process.execPath, join(ROOT, "scripts/image.ts"), "--tag", tag, "--engine", engine],
    600,
  );
  buildSeconds = (performance.now() - started) / 1000;
  if (built.code !== 0) throw new Error(`npm run image failed:\n${built.stdout}\n${built.stderr}`);
  const probe = await limited([engine, "run", "--rm", ...runArgs, tag, "version"], 120);
  // 125 and 126: the engine could not make or start the container (not the image's doing).
  if (probe.code === 125 || probe.code === 126 || probe.code === 124) {
    unavailable = `${engine} cannot run a container here (exit ${probe.code}: ${probe.stderr.trim().split("\n").at(-1)}); on a restricted host, SIGNALBOARD_TEST_CONTAINER_ARGS may give it what it needs (see docs/development.md)`;
  } else if (probe.code !== 0 || probe.stdout.trim() !== pkg.version) {
    throw new Error(`the image does not run: exit ${probe.code}\n${probe.stdout}\n${probe.stderr}`);
  }
}
if (unavailable) {
  if (process.env.SIGNALBOARD_REQUIRE_CONTAINERS === "1")
    throw new Error(`the container image tests cannot run: ${unavailable}`);
  console.warn(`\n  SKIPPED: the container image tests: ${unavailable}\n`);
}

afterAll(async () => {
  if (engine) await limited([engine, "rmi", "--force", tag], 60);
});

describe.skipIf(unavailable !== null)("the container image", () => {
  const name = `signalboard-test-${process.pid}`;
  const volume = `signalboard-test-data-${process.pid}`;
  let port: number;
  let url: string;
  const e = (...args: string[]) => limited([engine!, ...args], 60);

  beforeAll(async () => {
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    port = probe.port;
    probe.stop(true);
    url = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await e("rm", "--force", "--volumes", name);
    await e("volume", "rm", "--force", volume);
  });

  test("holds the binary, its libraries, CA certificates and time zone data, and no shell or package manager", async () => {
    const inspected = JSON.parse((await e("image", "inspect", tag)).stdout)[0];
    const config = inspected.Config;
    expect(config.User).toBe("10001:10001");
    expect(Object.keys(config.ExposedPorts)).toEqual(["8080/tcp"]);
    expect(Object.keys(config.Volumes)).toEqual(["/data"]);
    expect(config.Entrypoint).toEqual(["/usr/local/bin/signalboard"]);
    expect(config.Cmd).toEqual(["serve"]);
    expect(config.Env).toEqual(expect.arrayContaining(["DATA_DIR=/data", "PORT=8080"]));
    // docker keeps the HEALTHCHECK in Config; podman beside it.
    expect((config.Healthcheck ?? inspected.Healthcheck)?.Test).toEqual([
      "CMD",
      "/usr/local/bin/signalboard",
      "healthcheck",
    ]);
    // One layer of files from the build context over nothing: no base image was pulled.
    expect(inspected.RootFS.Layers.length).toBeLessThanOrEqual(2);
    const created = (await e("create", tag)).stdout.trim();
    const archive = join(tempDir(), "image.tar");
    try {
      expect((await e("export", "--output", archive, created)).code).toBe(0);
      const listed = await limited(["tar", "-tf", archive], 60);
      expect(listed.code).toBe(0);
      const files = new Set(listed.stdout.split("\n").map((f) => `/${f.replace(/^\.?\//, "").replace(/\/$/, "")}`));
      for (const file of [
        "/usr/local/bin/signalboard",
        "/etc/ssl/certs/ca-certificates.crt",
        "/usr/share/zoneinfo/Europe/Berlin",
        "/etc/passwd",
      ])
        expect(files.has(file), file).toBe(true);
      expect([...files].some((f) => /\/libc\.so\.6$/.test(f))).toBe(true);
      expect([...files].some((f) => /\/ld-linux[^/]*\.so\.\d$/.test(f))).toBe(true);
      for (const absent of [
        "/bin/sh",
        "/usr/bin/sh",
        "/bin/bash",
        "/usr/bin/apt",
        "/usr/bin/dpkg",
        "/sbin/apk",
        "/usr/bin/curl",
      ])
        expect(files.has(absent), absent).toBe(false);
    } finally {
      await e("rm", "--force", "--volumes", created);
      rmSync(dirname(archive), { recursive: true, force: true });
    }
    const size = Number((await e("image", "inspect", "--format", "{{.Size}}", tag)).stdout.trim());
    console.log(`  image: ${(size / 1e6).toFixed(1)} MB, built in ${buildSeconds.toFixed(0)} s (binary included)`);
  });

  test("runs as a user of its own, with a token made by exec and an event that survives a restart", async () => {
    const started = await e(
      "run",
      "--detach",
      "--name",
      name,
      ...runArgs,
      "--volume",
      `${volume}:/data`,
      "--env",
      `PORT=${port}`,
      tag,
    );
    expect(started.code, started.stderr).toBe(0);
    await eventually(async () => expect((await fetch(`${url}/healthz`)).status).toBe(200), 30_000);

    // Not root: the server's process, as the host sees it.
    const pid = (await e("inspect", "--format", "{{.State.Pid}}", name)).stdout.trim();
    const uid = /^Uid:\s+(\d+)\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    expect(uid?.[1]).toBe("10001");
    expect(uid?.[2]).toBe("10001");

    // Commands in the container use its settings (DATA_DIR=/data): the server's database.
    const made = await e("exec", name, "signalboard", "token", "create", "--name", "from-exec");
    expect(made.code, made.stderr).toBe(0);
    const token = made.stdout.trim().split("\n").at(-1)!;
    expect(token).toMatch(/^sb_/);
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const posted = await fetch(`${url}/v1/log`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        project: "default",
        channel: "container",
        event: "Kept in /data",
        tags: { zone: "Europe/Berlin" },
      }),
    });
    expect(posted.status).toBe(200);

    // The HEALTHCHECK's own command, run where the engine runs it.
    const healthy = await e("exec", name, "/usr/local/bin/signalboard", "healthcheck");
    expect(healthy.code).toBe(0);
    expect(healthy.stdout).toContain(`signalboard ${pkg.version} answers at http://127.0.0.1:${port}/healthz`);

    const restarted = await e("restart", "--time", "10", name);
    expect(restarted.code, restarted.stderr).toBe(0);
    const events = await eventually(async () => {
      const response = await fetch(`${url}/v1/events?project=default&channel=container`, { headers });
      expect(response.status).toBe(200);
      return ((await response.json()) as { events: { event: string }[] }).events;
    }, 30_000);
    expect(events.map((event) => event.event)).toEqual(["Kept in /data"]);

    const logs = await e("logs", name);
    expect(logs.stdout + logs.stderr).toContain('"dataDir":"/data"');
    expect(logs.stdout + logs.stderr).not.toContain('"level":"error"');
  });
});

describe("compose.yaml", () => {
  const compose = Bun.YAML.parse(readFileSync(join(ROOT, "compose.yaml"), "utf8")) as {
    services: Record<
      string,
      {
        image?: string;
        profiles?: string[];
        volumes?: string[];
        environment?: Record<string, string>;
        ports?: string[];
        depends_on?: Record<string, unknown> | string[];
        command?: unknown;
        configs?: unknown[];
      }
    >;
    volumes: Record<string, unknown>;
    configs?: Record<string, { content?: string }>;
  };
  const services = compose.services;
  const inProfile = (profile: string) => Object.entries(services).filter(([, s]) => s.profiles?.includes(profile));

  test("one instance on SQLite with its volume, the image npm run image makes", () => {
    const single = inProfile("sqlite");
    expect(single).toHaveLength(1);
    const [, sqlite] = single[0]!;
    expect(sqlite.image).toBe("signalboard:latest");
    expect(sqlite.volumes?.some((v) => v.endsWith(":/data"))).toBe(true);
    expect(compose.volumes).toHaveProperty(sqlite.volumes![0]!.split(":")[0]!);
    expect(sqlite.environment?.DATABASE_URL).toBeUndefined();
    expect(sqlite.ports?.some((p) => p.endsWith(":8080"))).toBe(true);
  });

  test("a second profile: PostgreSQL and two instances behind Caddy, as docs/scale-out.md has it", () => {
    const scale = inProfile("scale-out");
    const instances = scale.filter(([, s]) => s.image === "signalboard:latest");
    expect(instances).toHaveLength(2);
    for (const [, instance] of instances) {
      expect(instance.environment?.DATABASE_URL).toMatch(/^postgres:\/\/signalboard:[^@]+@postgres:5432\/signalboard$/);
      expect(instance.environment?.SIGNALBOARD_TRUST_PROXY).toBeDefined();
      expect(instance.ports ?? []).toEqual([]); // reached through Caddy only
    }
    expect(scale.some(([name, s]) => name === "postgres" && s.image?.startsWith("postgres:"))).toBe(true);
    const caddy = scale.find(([, s]) => s.image?.startsWith("caddy:"));
    expect(caddy).toBeDefined();
    const caddyfile = compose.configs?.caddyfile?.content ?? "";
    for (const [name] of instances) expect(caddyfile).toContain(`${name}:8080`);
    for (const line of ["lb_policy round_robin", "health_uri /readyz", "flush_interval -1"]) {
      expect(caddyfile).toContain(line);
      expect(readFileSync(join(ROOT, "docs/scale-out.md"), "utf8")).toContain(line);
    }
  });

  test("is where the README and docs/install.md say", () => {
    expect(existsSync(join(ROOT, "compose.yaml"))).toBe(true);
    for (const doc of ["README.md", "docs/install.md"]) {
      for (const said of [
        "npm run image",
        "docker compose --profile sqlite up",
        "docker compose --profile scale-out up",
      ])
        expect(readFileSync(join(ROOT, doc), "utf8").includes(said), `${doc}: ${said}`).toBe(true);
    }
  });
});
