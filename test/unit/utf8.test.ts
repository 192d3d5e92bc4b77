// Finding the first byte that is not UTF-8 (http/utf8.ts), held to the platform's strict decoder on
// random bytes: the bytes before it decode, and the body decodes only when there is none.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { firstInvalid } from "../../src/http/utf8.ts";

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const decodes = (bytes: Uint8Array) => {
  try {
    strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
};

// Mostly UTF-8 text with a few stray bytes in it, so both sides of every boundary are met.
const bytes = fc
  .array(
    fc.oneof(
      fc.string({ unit: "binary", maxLength: 4 }).map((s) => [...Buffer.from(s)]),
      fc.array(fc.integer({ min: 0x80, max: 0xff }), { maxLength: 3 }),
      fc.constantFrom([0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe0, 0x80, 0xaf], [0xef, 0xbf, 0xbd]),
    ),
    { maxLength: 12 },
  )
  .map((parts) => Uint8Array.from(parts.flat()));

describe("firstInvalid", () => {
  test("agrees with the strict decoder: all of it decodes exactly when none is invalid, and what comes before always does", () => {
    fc.assert(
      fc.property(bytes, (b) => {
        const at = firstInvalid(b);
        expect(decodes(b)).toBe(at === b.length);
        expect(decodes(b.subarray(0, at))).toBe(true);
        if (at < b.length) expect(decodes(b.subarray(0, at + 4))).toBe(false);
      }),
      { numRuns: 5000 },
    );
  });
});
