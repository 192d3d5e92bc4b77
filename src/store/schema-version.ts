// Which binaries may run on a database's schema, so that instances of two versions run side by side
// during a rolling upgrade. Schema changes expand first (new tables, new columns that are nullable or
// have a default: the previous version runs on them unaware) and contract a version later (a column
// or table the previous version no longer uses is dropped). Each binary records, with its
// migrations, the oldest version that may still run on the schema it leaves; an older binary that
// meets migrations it does not know runs when it is that version or newer, and otherwise refuses in
// one line that names both versions.
import { log } from "../logger.ts";
import { VERSION } from "../version.ts";

/**
 * The oldest version that may run on the schema this version leaves. Raise it (to the version
 * before this one, at most) in a release whose migrations contract: drop or change what an older
 * version still reads or writes. 0.3.0 raised it to itself: its summaries of the events must be
 * kept by every writer, and on SQLite an older binary would write events without them (on
 * PostgreSQL a trigger keeps them, so older instances already running may go on until replaced).
 */
export const OLDEST_COMPATIBLE = "0.3.0";

/** Where it is recorded: the meta table of both stores. */
export const SCHEMA_META = { migratedBy: "schema.migrated_by", oldestCompatible: "schema.oldest_compatible" } as const;

export class MigrationError extends Error {
  override name = "MigrationError";
}

/**
 * For a binary that found migrations it does not know (`unknown`): returns when it may run (and
 * says so in a warning), throws a MigrationError in one line when it may not.
 */
export function checkNewerSchema(
  unknown: string[],
  recorded: { migratedBy: string | null; oldestCompatible: string | null },
  version = VERSION,
): void {
  const by = recorded.migratedBy ? `Signalboard ${recorded.migratedBy}` : "a newer Signalboard";
  if (recorded.oldestCompatible && compareVersions(version, recorded.oldestCompatible) >= 0) {
    log.warn(
      `the database was migrated by ${by}; this binary (${version}) runs on it, as versions from ${recorded.oldestCompatible} on may: upgrade it when you can`,
      { migrations: unknown },
    );
    return;
  }
  const needs = recorded.oldestCompatible
    ? `, which runs with versions ${recorded.oldestCompatible} and later only`
    : "";
  throw new MigrationError(
    `the database was migrated by ${by}${needs} (migrations ${unknown.join(", ")}); this binary is ${version}: run ${recorded.migratedBy ?? "that version"} or later, or restore the backup taken before the upgrade to go back`,
  );
}

/** -1, 0 or 1 as `a` is older than, the same as, or newer than `b` (major.minor.patch; anything after them is ignored). */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .split(/[.+-]/)
      .slice(0, 3)
      .map((n) => Number.parseInt(n, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] ?? 0) < (y[i] ?? 0) ? -1 : 1;
  return 0;
}
