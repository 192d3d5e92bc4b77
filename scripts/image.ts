// npm run image: an OCI image of the compiled binary, built FROM scratch with docker or podman
// (whichever answers here), from files of this machine only: no registry is asked for anything.
// The image holds the binary, the shared libraries it links (ldd names them), CA certificates, time
// zone data, and a passwd file for its user: no shell, no package manager. It runs as a user of its
// own (10001), keeps its data in the volume /data, listens on 8080, and checks itself with
// `signalboard healthcheck`.
//
//   npm run image [-- --tag NAME:TAG] [--binary PATH] [--engine docker|podman]
import { $ } from "bun";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import pkg from "../package.json";

const USER_ID = 10001;
const BIN = "/usr/local/bin/signalboard";
const CA_CERTIFICATES = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"];
const ZONEINFO = "/usr/share/zoneinfo";

const { values } = parseArgs({
  options: { tag: { type: "string" }, binary: { type: "string" }, engine: { type: "string" } },
});
const tags = values.tag ? [values.tag] : [`signalboard:${pkg.version}`, "signalboard:latest"];
const root = join(import.meta.dir, "..");

const engine = values.engine ?? (await findEngine());
if (!engine)
  fail(
    "neither docker nor podman answers here: install one (Debian: apt-get install -y podman), or start docker's daemon",
  );

const started = performance.now();
const context = mkdtempSync(join(tmpdir(), "signalboard-image-"));
try {
  const rootfs = join(context, "rootfs");
  const binary = join(rootfs, BIN);
  mkdirSync(dirname(binary), { recursive: true });
  if (values.binary) copyFileSync(values.binary, binary);
  else await $`${process.execPath} ${join(root, "scripts/build.ts")} ${binary}`.cwd(root);
  chmodSync(binary, 0o755);

  for (const library of await linkedLibraries(binary)) copyInto(rootfs, library);
  const certificates = CA_CERTIFICATES.find((file) => existsSync(file));
  if (!certificates)
    fail(
      `no CA certificates on this machine (looked for ${CA_CERTIFICATES.join(", ")}): apt-get install -y ca-certificates`,
    );
  copyInto(rootfs, certificates, "/etc/ssl/certs/ca-certificates.crt");
  if (!existsSync(ZONEINFO)) fail(`no time zone data in ${ZONEINFO}: apt-get install -y tzdata`);
  cpSync(ZONEINFO, join(rootfs, ZONEINFO), { recursive: true, verbatimSymlinks: true });

  mkdirSync(join(rootfs, "etc"), { recursive: true });
  writeFileSync(
    join(rootfs, "etc/passwd"),
    `root:x:0:0:root:/root:/sbin/nologin\nsignalboard:x:${USER_ID}:${USER_ID}:Signalboard:/data:/sbin/nologin\n`,
  );
  writeFileSync(join(rootfs, "etc/group"), `root:x:0:\nsignalboard:x:${USER_ID}:\n`);
  // Resolution by /etc/hosts first, then DNS, as a distribution sets it up (the runtime mounts both files).
  writeFileSync(join(rootfs, "etc/nsswitch.conf"), "hosts: files dns\n");
  mkdirSync(join(rootfs, "tmp"), { mode: 0o1777 });
  chmodSync(join(rootfs, "tmp"), 0o1777);
  mkdirSync(join(context, "data"), { mode: 0o700 });

  writeFileSync(join(context, "Containerfile"), containerfile());
  const tagArgs = tags.flatMap((t) => ["--tag", t]);
  // podman writes OCI images by default, which have no HEALTHCHECK; the docker format keeps it.
  const format = engine === "podman" ? ["--format", "docker"] : [];
  await $`${engine} build ${format} ${tagArgs} --file ${join(context, "Containerfile")} ${context}`;
  const size = Number((await $`${engine} image inspect --format {{.Size}} ${tags[0]!}`.text()).trim());
  console.log(
    `built ${tags.join(", ")} with ${engine}: ${(size / 1e6).toFixed(1)} MB, in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
} finally {
  rmSync(context, { recursive: true, force: true });
}

function containerfile(): string {
  return `# Written by scripts/image.ts (npm run image). Everything comes from the build context.
FROM scratch
COPY rootfs/ /
COPY --chown=${USER_ID}:${USER_ID} data/ /data/
ENV PATH=/usr/local/bin DATA_DIR=/data PORT=8080 HOST=0.0.0.0
USER ${USER_ID}:${USER_ID}
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["${BIN}", "healthcheck"]
ENTRYPOINT ["${BIN}"]
CMD ["serve"]
LABEL org.opencontainers.image.title="Signalboard" org.opencontainers.image.version="${pkg.version}" org.opencontainers.image.description="${pkg.description}" org.opencontainers.image.licenses="${pkg.license}"
`;
}

/** The engine that answers: docker when its daemon runs, else podman. */
async function findEngine(): Promise<string | null> {
  for (const candidate of ["docker", "podman"]) {
    if (!Bun.which(candidate)) continue;
    const info = Bun.spawn([candidate, "info"], { stdout: "ignore", stderr: "ignore", timeout: 20_000 });
    if ((await info.exited) === 0) return candidate;
  }
  return null;
}

/** The files the binary's loader needs: each library ldd names, and the loader itself. */
async function linkedLibraries(binary: string): Promise<string[]> {
  const out = await $`ldd ${binary}`.text();
  const files = [...out.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)].map((m) => m[1]!);
  if (!files.some((f) => f.includes("ld-linux") || f.includes("ld-musl")))
    fail(`ldd did not name the binary's loader:\n${out}`);
  return files;
}

/** Copies `file` (its contents, symlinks followed) to the same path under `rootfs`, or to `as`. */
function copyInto(rootfs: string, file: string, as = file): void {
  const target = join(rootfs, as);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(realpathSync(file), target);
}

function fail(message: string): never {
  console.error(`npm run image: ${message}`);
  process.exit(1);
}
