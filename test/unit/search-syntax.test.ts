// The feed search's syntax: every tag value an event can hold can be written as a search term (the
// chip's link, the event page's Filter link, the search box) and reads back as that same value;
// what was typed keeps its order.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { readFilters, tagTerm } from "../../src/web/filters.ts";
import { query } from "../../src/web/html.ts";

/** The filters a page reads from a URL whose q is `q`, sent as a link or a form sends it. */
const read = (q: string) => readFilters(new URLSearchParams(query({ q }).slice(1)));
/** What a search box holds after `value` was put in it: it drops line feeds and carriage returns. */
const inBox = (value: string) => value.replace(/[\r\n]/g, "");

const key = fc.stringMatching(/^[a-z0-9-]{1,64}$/);
// Values as the API stores them (up to 256 characters of anything), with the characters the syntax
// gives a meaning to drawn often.
const tricky = fc.constantFrom(
  '"',
  "\\",
  ":",
  " ",
  "\t",
  "\n",
  "\r",
  "\u00a0",
  "\u2028",
  "é",
  "🚀",
  "a",
  "Z",
  "-",
  "'",
  "\\n",
  '\\"',
);
const value = fc.oneof(
  fc.string({ maxLength: 256, unit: "binary" }),
  fc.array(tricky, { maxLength: 20 }).map((parts) => parts.join("")),
);

describe("tag values as search terms", () => {
  test("any stored value, written by tagTerm, reads back as itself, through a URL and through the search box", () => {
    fc.assert(
      fc.property(key, value, (k, v) => {
        const term = tagTerm(k, v);
        expect(term).not.toMatch(/[\r\n]/); // a search box would drop them
        expect(read(term).tags).toEqual([[k, v]]);
        expect(read(inBox(term)).tags).toEqual([[k, v]]);
        // Beside other terms, in any place.
        const f = read(`deploy ${term} plan:pro`);
        expect(f.tags).toEqual([
          [k, v],
          ["plan", "pro"],
        ]);
        expect(f.text).toBe("deploy");
        // And the search as the page writes it back reads the same again.
        expect(read(f.q).tags).toEqual(f.tags);
      }),
      { numRuns: 2000, seed: 11 },
    );
  });

  test("values that need quotes are quoted with backslash escapes; the rest are written as they are", () => {
    expect(tagTerm("plan", "pro")).toBe("plan:pro");
    expect(tagTerm("path", "C:\\dir")).toBe("path:C:\\dir");
    expect(tagTerm("quote", 'va"lue')).toBe('quote:va"lue');
    expect(tagTerm("plan", "pro plus")).toBe('plan:"pro plus"');
    expect(tagTerm("say", 'say "hi"')).toBe('say:"say \\"hi\\""');
    expect(tagTerm("q", '"quoted"')).toBe('q:"\\"quoted\\""');
    expect(tagTerm("empty", "")).toBe('empty:""');
    expect(tagTerm("dir", "C:\\my dir")).toBe('dir:"C:\\\\my dir"');
    expect(tagTerm("lines", "one\ntwo")).toBe('lines:"one\\ntwo"');
  });

  test("what people typed before still reads the same", () => {
    expect(read("plan:pro deploy").tags).toEqual([["plan", "pro"]]);
    expect(read('name:"Ann Lee" x').tags).toEqual([["name", "Ann Lee"]]);
    expect(read('name:"Ann Lee" x').text).toBe("x");
    expect(read("plan: deploy")).toMatchObject({ text: "plan: deploy", tags: [] }); // a key with nothing after it is a word
    expect(read('k:"unclosed value').tags).toEqual([["k", '"unclosed']]);
    expect(read("Plan:pro").tags).toEqual([]); // not a tag key: a word
    expect(read('k:""').tags).toEqual([["k", ""]]);
  });

  test("the search keeps the order it was typed in", () => {
    for (const typed of ['plan:pro deploy env:"eu west" now', "a b:c d", 'x:"" y']) expect(read(typed).q).toBe(typed);
    // Written back in the canonical form, still in place.
    expect(read('deploy name:"Ann" now').q).toBe("deploy name:Ann now");
    // Tag filters from tag= follow the ones typed.
    expect(readFilters(new URLSearchParams("q=deploy+plan%3Apro+now&tag=env%3Aeu")).q).toBe(
      "deploy plan:pro now env:eu",
    );
  });

  test("at most 8 tag filters and 200 characters of words are used, and q says only what is used", () => {
    const f = read(Array.from({ length: 10 }, (_, i) => `k${i}:v`).join(" "));
    expect(f.tags).toHaveLength(8);
    expect(f.q).toBe(Array.from({ length: 8 }, (_, i) => `k${i}:v`).join(" "));
    const long = read(`${"a".repeat(150)} ${"b".repeat(100)} plan:pro more words`);
    expect(long.text).toBe(`${"a".repeat(150)} ${"b".repeat(49)}`);
    expect(long.q).toBe(`${long.text} plan:pro`);
    expect(read(`${"a".repeat(250)} b c`).text).toBe("a".repeat(200));
    expect(read(`${"a".repeat(199)} bc d`).text).toBe("a".repeat(199));
    expect(read(`${"a".repeat(198)} bc d`).text).toBe(`${"a".repeat(198)} b`);
    // As before: the words joined, and cut at 200 characters.
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z]{1,80}$/), { maxLength: 8 }), (words) =>
        expect(read(words.join(" ")).text).toBe(words.join(" ").slice(0, 200).trimEnd()),
      ),
    );
  });
});
