// The dashboard's script as the server serves it: one classic script bundled from src/browser/,
// which registers, when Alpine starts, a component for every x-data name the pages use (a name
// with no component would fail only in a browser, and only on its page).
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { appBundle } from "../../src/web/app-bundle.ts";

const WEB = join(import.meta.dir, "../../src/web");

function namesInPages(): Set<string> {
  const names = new Set<string>();
  for (const file of readdirSync(WEB, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts")))
    for (const m of readFileSync(join(WEB, file), "utf8").matchAll(/x-data="(\w+)"/g)) names.add(m[1]!);
  return names;
}

/** Runs the bundle against a page that has only listeners, then starts "Alpine": the names registered. */
function registered(bundle: string): string[] {
  const listeners = new Map<string, () => void>();
  const page = { addEventListener: (type: string, listener: () => void) => listeners.set(type, listener) };
  const names: string[] = [];
  const window = { ...page, Alpine: { data: (name: string) => names.push(name) } };
  new Function("document", "window", "setInterval", bundle)(page, window, () => 0);
  listeners.get("alpine:init")!();
  return names;
}

test("the bundle is one strict classic script that registers a component for every x-data of the pages", () => {
  const bundle = appBundle();
  expect(bundle.startsWith('"use strict";')).toBe(true);
  expect(bundle).not.toMatch(/^\s*(import|export)\s/m);
  const names = registered(bundle);
  expect(new Set(names).size).toBe(names.length);
  expect(names.sort()).toEqual([...namesInPages()].sort());
});
