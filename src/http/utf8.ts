// A JSON body whose bytes are not UTF-8: which field holds them. Decoding replaces bad bytes with
// U+FFFD, which a body may also hold as a real character, so the first bad byte is found by a scan
// of the bytes; the body is decoded again with a mark in its place (a lone surrogate, which no
// decoded text holds), parsed, and walked to the string or key that holds the mark. Only a body
// that failed the strict decode comes here: the cost is the refused request's.
import { InvalidJson, ValidationError } from "../errors.ts";

const LENIENT = new TextDecoder("utf-8");
const MARK = "\udfff";

/** The 400 for a body whose bytes are not UTF-8: naming the field that holds them, where there is one. */
export function notUtf8(bytes: Uint8Array): Error {
  const at = firstInvalid(bytes);
  const before = LENIENT.decode(bytes.subarray(0, at));
  // The bad sequence at `at` decodes to one U+FFFD, the first character of what follows it.
  const after = LENIENT.decode(bytes.subarray(at)).slice(1);
  let value: unknown;
  try {
    value = JSON.parse(before + MARK + after);
  } catch {
    return new InvalidJson(`bytes that are not UTF-8 at byte ${at}`);
  }
  const found = holder(value);
  const where = found?.path || "the request body";
  const what = found?.key ? "has a key that is" : "is";
  return ValidationError.field(
    found?.path ?? "",
    found?.key ? "invalid_key" : "invalid_string",
    `${where}: ${what} not well-formed UTF-8 text (bytes that are not UTF-8 at byte ${at}); send text as UTF-8`,
  );
}

/** The path of the string (or of the object whose key) that holds the mark; null when none does (a key given twice). */
function holder(root: unknown): { path: string; key: boolean } | null {
  const stack: [unknown, string][] = [[root, ""]];
  while (stack.length) {
    const [value, path] = stack.pop()!;
    if (typeof value === "string") {
      if (value.includes(MARK)) return { path, key: false };
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    for (const [key, child] of Object.entries(value)) {
      if (key.includes(MARK)) return { path, key: true };
      stack.push([child, path ? `${path}.${key}` : key]);
    }
  }
  return null;
}

/** The offset of the first byte that does not begin a well-formed UTF-8 sequence (Unicode, table 3-7); the length when all do. */
export function firstInvalid(bytes: Uint8Array): number {
  const n = bytes.length;
  const cont = (i: number, lo = 0x80, hi = 0xbf) => i < n && bytes[i]! >= lo && bytes[i]! <= hi;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) i += 1;
    else if (b >= 0xc2 && b <= 0xdf && cont(i + 1)) i += 2;
    else if (b === 0xe0 && cont(i + 1, 0xa0) && cont(i + 2)) i += 3;
    else if (((b >= 0xe1 && b <= 0xec) || b === 0xee || b === 0xef) && cont(i + 1) && cont(i + 2)) i += 3;
    else if (b === 0xed && cont(i + 1, 0x80, 0x9f) && cont(i + 2)) i += 3;
    else if (b === 0xf0 && cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3)) i += 4;
    else if (b >= 0xf1 && b <= 0xf3 && cont(i + 1) && cont(i + 2) && cont(i + 3)) i += 4;
    else if (b === 0xf4 && cont(i + 1, 0x80, 0x8f) && cont(i + 2) && cont(i + 3)) i += 4;
    else return i;
  }
  return n;
}
