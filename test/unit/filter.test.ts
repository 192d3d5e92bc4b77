// One filter, two ways of asking: the store's SQL (with its full-text index) and the live matcher
// must give the same events for the same filter, or a live view would show what a reload does not
// (or miss what it does). Random events go in through the real ingest path; random filters are
// asked both ways.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { eventMatcher } from "../../src/domain/filter.ts";
import type { EventFilter } from "../../src/model/filter.ts";
import { searchTokens } from "../../src/store/search-tokens.ts";
import { eventually, openSse, post, signedIn, startTestServer, type TestServer } from "../helpers.ts";
import type { StoredEvent } from "../../src/model/event.ts";

// Text from what people write: ASCII, accented Latin, Greek and Cyrillic (with their own accents
// and final sigma), Hangul, CJK, emoji, combining accents, and the punctuation that separates words.
const PIECES = [
  "a",
  "b",
  "e",
  "x",
  "Z",
  "7",
  "42",
  "_",
  "-",
  ".",
  " ",
  "  ",
  "é",
  "É",
  "è",
  "ñ",
  "ü",
  "Å",
  "ø",
  "ß",
  "œ",
  "ǡ",
  "ı",
  "İ",
  "ς",
  "σ",
  "ά",
  "Ω",
  "ё",
  "Й",
  "й",
  "가",
  "한",
  "中",
  "🚀",
  "❤",
  "e\u0301",
  "\u0300",
  "ﬁ",
  "Ⅻ",
  "①",
  "µ",
  "ſ",
];
const text = fc.array(fc.constantFrom(...PIECES), { minLength: 0, maxLength: 12 }).map((parts) => parts.join(""));
const nonEmpty = text.filter((t) => t.trim().length > 0);

let server: TestServer;
let stored: StoredEvent[] = [];
let projectId = 0;
const CHANNELS = ["orders", "signups", "errors"];
const USERS = ["u1", "u2", "üser"];

beforeAll(async () => {
  server = await startTestServer();
  projectId = (await server.services.projects.create("shop")).id;
  const events = fc.sample(
    fc.record({
      channel: fc.constantFrom(...CHANNELS),
      event: nonEmpty,
      description: fc.option(text, { nil: undefined }),
      userId: fc.option(fc.constantFrom(...USERS), { nil: undefined }),
      tags: fc.option(
        fc.dictionary(
          fc.constantFrom("plan", "n", "ok"),
          fc.oneof(fc.constantFrom("pro", "free", "Pro plus"), fc.integer({ min: 0, max: 3 }), fc.boolean()),
          { maxKeys: 2 },
        ),
        { nil: undefined },
      ),
      timestamp: fc.option(fc.integer({ min: 1_700_000_000, max: 1_700_000_100 }), { nil: undefined }),
    }),
    { numRuns: 400, seed: 42 },
  );
  for (const e of events) {
    const written = await server.services.ingest.logEvent({ kind: "full", tokenId: null }, { project: "shop", ...e });
    stored.push(written.result!);
  }
  // The index is written by its own thread, a moment after the commit.
  const last = stored.at(-1)!.id;
  await eventually(async () =>
    expect(
      (await server.store.events.list({ projectId, terms: searchTokens(stored.at(-1)!.name), limit: 500 })).some(
        (e) => e.id === last,
      ),
    ).toBe(true),
  );
});
afterAll(() => server.close());

const wordsOf = (e: StoredEvent) => [...searchTokens(e.name), ...searchTokens(e.description ?? "")];

describe("the live matcher and the store agree", () => {
  test("the tokenizer folds as the index does: cafe finds Café, ΣΟΦΙΑ finds σοφια", () => {
    expect(searchTokens("Café au LAIT")).toEqual(["cafe", "au", "lait"]);
    expect(searchTokens("ΣΟΦΙΑ σοφια ς")).toEqual(["σοφια", "σοφια", "σ"]);
    expect(searchTokens("foo_bar e\u0301x 🚀launch")).toEqual(["foo", "bar", "ex", "launch"]);
  });

  test("on random filters over random events, both give the same events", async () => {
    const someWord = fc.constantFrom(...stored.flatMap(wordsOf).filter(Boolean));
    const term = fc.oneof(
      someWord,
      someWord.map((w) => w.slice(0, Math.max(1, Math.ceil(w.length / 2)))),
      text.map((t) => searchTokens(t)[0] ?? "a"),
    );
    const filter: fc.Arbitrary<EventFilter> = fc.record(
      {
        projectId: fc.constant(projectId),
        channel: fc.constantFrom(...CHANNELS, "nope"),
        userId: fc.constantFrom(...USERS),
        event: fc.constantFrom(...stored.slice(0, 30).map((e) => e.name), "nope"),
        tags: fc.array(
          fc.tuple(
            fc.constantFrom("plan", "n", "ok"),
            fc.constantFrom("pro", "free", "Pro plus", "0", "1", "true", "false"),
          ),
          { maxLength: 2 },
        ),
        terms: fc.array(term, { minLength: 1, maxLength: 3 }),
        from: fc.integer({ min: 1_700_000_000_000, max: 1_700_000_100_000 }),
        to: fc.integer({ min: 1_700_000_000_000, max: 1_700_000_200_000 }),
        liveOnly: fc.boolean(),
      },
      { requiredKeys: ["projectId"] },
    );
    await fc.assert(
      fc.asyncProperty(filter, async (f) => {
        const fromSql = (await server.store.events.list({ ...f, limit: 1000 })).map((e) => e.id).sort((a, b) => a - b);
        const inMemory = stored
          .filter(eventMatcher(f))
          .map((e) => e.id)
          .sort((a, b) => a - b);
        expect(inMemory).toEqual(fromSql);
      }),
      { numRuns: 400, seed: 7 },
    );
  });
});

describe("a dashboard's live search", () => {
  test("finds what a reload finds: cafe shows a new “Café” event live", async () => {
    const owner = { username: "owner", password: "correct horse battery" };
    await server.services.accounts.createUser(owner, "owner");
    const cookie = (await signedIn(server, owner)).cookieHeader();
    const stream = await openSse(`${server.url}/p/shop/live?q=cafe`, { Cookie: cookie });
    await post(server, "/v1/log", { project: "shop", channel: "orders", event: "Tea ordered" });
    await post(server, "/v1/log", { project: "shop", channel: "orders", event: "Café au lait ordered" });
    const feed = () => stream.frames.filter((f) => f.event === "feed");
    await eventually(() => expect(feed().length).toBeGreaterThan(0));
    expect(
      feed()
        .map((f) => f.data)
        .join(),
    ).toContain("Café au lait ordered");
    expect(feed().some((f) => f.data.includes("Tea ordered"))).toBe(false);
    stream.close();
  });
});
