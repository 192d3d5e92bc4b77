// The ingest fast path must give exactly what the zod schema gives, or nothing (the request then
// takes the full path). Random bodies, valid and not, checked both ways.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { fastLogInput } from "../../src/api/fast-path.ts";
import { logBody, logEventBody } from "../../src/api/models.ts";
import { checkShape } from "../../src/http/body.ts";

const strings = fc.oneof(
  fc.constantFrom(
    "",
    "a",
    "my-app",
    "Deploy",
    "UPPER",
    "has space",
    "x".repeat(64),
    "x".repeat(65),
    "x".repeat(200),
    "x".repeat(201),
    "\ud800",
    "é",
    "🚀",
    ":rocket:",
    ":nope:",
    "🚀🚀",
    "\u0000",
    "__proto__",
    "007",
  ),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: "grapheme", maxLength: 8 }),
);
const scalar = fc.oneof(strings, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(undefined));
const value = fc.oneof(
  scalar,
  fc.array(scalar, { maxLength: 2 }),
  fc.dictionary(fc.constantFrom("a", "plan"), scalar, { maxKeys: 2 }),
);
const tags = fc.oneof(
  fc.dictionary(
    fc.oneof(
      fc.constantFrom("plan", "env", "build", "a-b", "Plan", "__proto__", "x".repeat(65), "é"),
      fc.string({ maxLength: 5 }),
    ),
    fc.oneof(strings, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant({})),
    { maxKeys: 4 },
  ),
  fc.dictionary(fc.constantFrom(...Array.from({ length: 40 }, (_, i) => `k${i}`)), fc.constant(1), {
    minKeys: 30,
    maxKeys: 40,
  }),
  value,
);
const now = Date.now();

/** Mostly a valid value, sometimes anything at all. */
const mostly = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: value as fc.Arbitrary<unknown> });

function body(names: { event: string; description: string }) {
  return fc
    .record(
      {
        project: mostly(fc.constantFrom("default", "my-app", "a".repeat(64), "a".repeat(65), "My-App")),
        channel: mostly(fc.constantFrom("deploys", "a", "b-2", "has space")),
        [names.event]: mostly(
          fc.oneof(
            fc.constantFrom("Deployed v1", "e", "", "x".repeat(200), "x".repeat(201), "\ud800 lone"),
            fc.string({ maxLength: 30 }),
          ),
        ),
        [names.description]: mostly(
          fc.oneof(
            fc.constantFrom("", "All green", "y".repeat(10_000), "y".repeat(10_001), "a\udc00"),
            fc.string({ maxLength: 30 }),
            fc.constant(null),
          ),
        ),
        icon: mostly(fc.constantFrom("🚀", ":rocket:", "❤", "🇫🇷", "👍🏽", "x", "", ":nope:", "🚀🚀", null)),
        notify: mostly(fc.constantFrom(true, false, null, "true", 1)),
        tags: fc.oneof(
          {
            weight: 6,
            arbitrary: fc.dictionary(
              fc.constantFrom("plan", "env", "build", "a-b"),
              fc.oneof(
                fc.constantFrom("pro", "", "x".repeat(256), "x".repeat(257), "\ud800"),
                fc.integer(),
                fc.double(),
                fc.boolean(),
              ),
              { maxKeys: 4 },
            ),
          },
          { weight: 2, arbitrary: tags },
        ),
        parser: mostly(fc.constantFrom("text", "markdown", "html", null)),
        user_id: mostly(fc.constantFrom("user-1", "x".repeat(256), "x".repeat(257), "", null)),
        timestamp: mostly(
          fc.constantFrom(
            1_700_000_000,
            1_700_000_000.5,
            Math.floor(now / 1000) - 10,
            now,
            -1,
            now / 1000 + 200_000,
            0,
            null,
          ),
        ),
        priority: fc.oneof(
          { weight: 40, arbitrary: fc.constantFrom(1, 2, 3, 4, 5, null) },
          { weight: 1, arbitrary: fc.constantFrom(0, 6, 2.5, -1, "3", true, 1e300) },
        ),
        extra: value,
      },
      { requiredKeys: ["project", "channel", names.event] },
    )
    .map((b) => {
      // Required fields present most of the time; an unknown field now and then.
      const out: Record<string, unknown> = { ...b };
      return out;
    });
}

/** What the full path gives: the shape check, then zod; null when it refuses. */
function fullPath(schema: typeof logBody | typeof logEventBody, b: unknown) {
  try {
    checkShape(b);
  } catch {
    return null;
  }
  const r = schema.safeParse(b);
  return r.success ? r.data : null;
}

describe("the ingest fast path", () => {
  for (const [route, schema, names] of [
    ["/v1/log", logBody, { event: "event", description: "description" }],
    ["/log-event", logEventBody, { event: "title", description: "message" }],
  ] as const) {
    test(`${route}: whatever it takes, zod takes too, with the same input; and it takes every valid body of known fields`, () => {
      let fast = 0;
      fc.assert(
        fc.property(body(names), (raw) => {
          const b = JSON.parse(JSON.stringify(raw)); // as the server sees it: parsed JSON
          const quick = fastLogInput(b, names, now);
          const full = fullPath(schema, b);
          if (quick === null) {
            // It may leave a body to zod only when the body has a field it does not know.
            if (full) expect(Object.keys(b)).toContain("extra");
            return;
          }
          fast++;
          expect(full).not.toBeNull();
          expect(quick).toEqual(full!);
          expect({ ...quick }).toStrictEqual({ ...full! });
        }),
        { numRuns: 10_000, seed: 11 },
      );
      expect(fast).toBeGreaterThan(30); // valid bodies are a small share of what is generated; each is checked
    });
  }

  test("takes a typical LogSnag event, and gives it as the schema does", () => {
    const b = {
      project: "default",
      channel: "deploys",
      event: "Deployed v1.4.2",
      description: "All checks green",
      icon: ":rocket:",
      notify: true,
      tags: { env: "prod", build: 4211, ok: true },
      user_id: "u1",
      parser: "markdown",
      timestamp: 1_700_000_000,
    };
    const quick = fastLogInput(b, { event: "event", description: "description" }, now);
    expect(quick).not.toBeNull();
    expect(quick).toEqual(logBody.parse(b));
    expect(quick!.icon).toBe("🚀");
  });
});
