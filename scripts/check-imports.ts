// The layers' rules, checked on every import in src/ (type-only ones too): the inner layers import
// nothing from the outer ones, and no module reaches itself through its imports. Run by CI:
//   bun scripts/check-imports.ts [SRC_DIR]
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SRC = resolve(process.argv[2] ?? join(import.meta.dir, "../src"));

/** What each layer must not import: the entity types, the domain and the store know nothing of HTTP, pages or commands. */
const OUTER = ["http/", "api/", "web/", "cli/", "app.ts", "server.ts", "services.ts", "main.ts"];
const RULES: { layer: string; forbidden: string[] }[] = [
  { layer: "model/", forbidden: [...OUTER, "domain/", "store/", "live/", "notify/"] },
  { layer: "errors.ts", forbidden: [...OUTER, "domain/", "store/", "live/", "notify/"] },
  { layer: "domain/", forbidden: [...OUTER, "store/sqlite/", "store/pg/"] },
  { layer: "store/", forbidden: [...OUTER, "domain/", "live/", "notify/"] },
  { layer: "live/", forbidden: [...OUTER, "store/"] },
  { layer: "notify/", forbidden: [...OUTER, "store/sqlite/", "store/pg/"] },
  { layer: "api/", forbidden: ["web/", "cli/", "store/", "app.ts", "server.ts"] },
  { layer: "web/", forbidden: ["cli/", "store/", "app.ts", "server.ts"] },
  { layer: "http/", forbidden: ["cli/", "store/", "app.ts", "server.ts"] },
  { layer: "cli/", forbidden: ["store/", "http/", "web/", "app.ts"] },
];
// The browser code (bundled into the dashboard's script) and the server share no module: browser/
// imports only browser/, and nothing else imports it.
const BROWSER = "browser/";
const SERVER = readdirSync(SRC)
  .filter((name) => `${name}/` !== BROWSER)
  .map((name) => (statSync(join(SRC, name)).isDirectory() ? `${name}/` : name));
RULES.push({ layer: BROWSER, forbidden: SERVER });
for (const layer of SERVER) RULES.push({ layer, forbidden: [BROWSER] });

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.ts$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^"'`;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

const graph = new Map<string, string[]>();
for (const file of files(SRC)) {
  const text = readFileSync(file, "utf8");
  const targets: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2]!;
    if (!spec.startsWith(".")) continue;
    const target = resolve(dirname(file), spec);
    if (target.startsWith(SRC)) targets.push(relative(SRC, target));
  }
  graph.set(relative(SRC, file), targets);
}

const problems: string[] = [];
for (const [from, targets] of graph) {
  for (const rule of RULES) {
    if (!from.startsWith(rule.layer)) continue;
    for (const to of targets)
      if (rule.forbidden.some((f) => to.startsWith(f)))
        problems.push(
          `${from} imports ${to} (${rule.layer} must not import ${rule.forbidden.find((f) => to.startsWith(f))})`,
        );
  }
}

// Cycles: strongly connected components of more than one module (Tarjan).
let index = 0;
const stack: string[] = [];
const on = new Set<string>();
const indices = new Map<string, number>();
const low = new Map<string, number>();
function connect(v: string): void {
  indices.set(v, index);
  low.set(v, index++);
  stack.push(v);
  on.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!graph.has(w)) continue;
    if (!indices.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, indices.get(w)!));
  }
  if (low.get(v) !== indices.get(v)) return;
  const component: string[] = [];
  let w: string;
  do {
    w = stack.pop()!;
    on.delete(w);
    component.push(w);
  } while (w !== v);
  if (component.length > 1) problems.push(`import cycle: ${component.sort().join(" → ")}`);
}
for (const v of graph.keys()) if (!indices.has(v)) connect(v);

if (problems.length) {
  console.error(
    `${problems.length} import rule${problems.length === 1 ? "" : "s"} broken:\n${problems.map((p) => `  ${p}`).join("\n")}`,
  );
  process.exit(1);
}
console.log(`imports: ${graph.size} modules, layers respected, no cycles`);
