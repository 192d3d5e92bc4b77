// Reading request bodies with our rules. Every route reads its body itself, through these (never
// with Elysia's parsers, which read a body whole whatever its size): the right Content-Type (415),
// at most the route's limit, refused by its declared size before anything is read and counted as
// it is read when sent chunked (413), UTF-8 (400, naming the field whose bytes are not), valid JSON
// (400), nested no deeper than any of our bodies needs, and only well-formed text (400). Never a 500.
import { gunzipSync } from "node:zlib";
import {
  BadRequest,
  InvalidJson,
  PayloadTooLarge,
  UnsupportedEncoding,
  UnsupportedMediaType,
  ValidationError,
} from "../errors.ts";
import { notUtf8 } from "./utf8.ts";

/** Forms of the dashboard are small; only the API takes SIGNALBOARD_BODY_LIMIT. */
export const WEB_BODY_LIMIT = 256 * 1024;
/** Bun's own limit, far above ours: it answers with an empty 413, a last resort only. */
export const SERVER_BODY_LIMIT = 16 * 1024 * 1024;

// Our bodies nest three levels at most; deeper ones are refused before anything walks them
// (hashing a body nested 30,000 levels deep takes a second and a half).
const MAX_DEPTH = 16;

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

// JSON is UTF-8 (RFC 8259): bytes that are not are refused, where a lenient decode would store
// U+FFFD in their place and two different names could become one.
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

export async function readJson(request: Request, limit: number): Promise<unknown> {
  const value = await readJsonUnchecked(request, limit);
  checkShape(value);
  return value;
}

/**
 * The parsed body before checkShape: for a caller that checks the shape of what it knows itself
 * (api/fast-path.ts), and calls checkShape on anything else.
 */
export async function readJsonUnchecked(request: Request, limit: number): Promise<unknown> {
  const type = request.headers.get("content-type");
  if (!type || !JSON_TYPE.test(type)) throw new UnsupportedMediaType(type);
  return parseJson(await readBytes(request, limit));
}

/** JSON's bytes parsed: UTF-8 (400 naming the field whose bytes are not), not empty, valid JSON. */
export function parseJson(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = STRICT_UTF8.decode(bytes);
  } catch {
    throw notUtf8(bytes);
  }
  if (text.trim() === "") throw new InvalidJson("the body is empty");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidJson((error as Error).message);
  }
}

/**
 * Refuses values nested too deeply, and strings or keys that are not well-formed UTF-16 (a lone
 * surrogate such as "\ud800" cannot be stored as UTF-8: it would come back as U+FFFD, and two
 * different names would become one) or that hold the NUL character (U+0000, which PostgreSQL
 * cannot store in text, and which no name or message needs). Iterative, so no body can overflow
 * the stack.
 */
export function checkShape(root: unknown): void {
  const stack: [unknown, string, number][] = [[root, "", 0]];
  while (stack.length) {
    const [value, path, depth] = stack.pop()!;
    if (typeof value === "string") {
      if (!value.isWellFormed())
        throw ValidationError.field(
          path,
          "invalid_string",
          `${path || "the request body"}: contains a lone surrogate (not valid Unicode text)`,
        );
      if (value.includes("\u0000"))
        throw ValidationError.field(
          path,
          "invalid_string",
          `${path || "the request body"}: contains the NUL character (U+0000)`,
        );
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if (depth >= MAX_DEPTH)
      throw ValidationError.field(
        path,
        "too_deep",
        `${path || "the request body"}: nested more than ${MAX_DEPTH} levels deep`,
      );
    for (const [key, child] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if (!key.isWellFormed())
        throw ValidationError.field(
          path,
          "invalid_key",
          `${path || "the request body"}: has a key with a lone surrogate (not valid Unicode text)`,
        );
      if (key.includes("\u0000"))
        throw ValidationError.field(
          path,
          "invalid_key",
          `${path || "the request body"}: has a key with the NUL character (U+0000)`,
        );
      stack.push([child, at, depth + 1]);
    }
  }
}

/** A dashboard form's fields by name (a name sent twice becomes a list: checkbox groups), read up to `limit` bytes. */
export async function readForm(request: Request, limit: number): Promise<Record<string, string | string[]>> {
  const type = request.headers.get("content-type") ?? "";
  if (type && !/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type))
    throw new UnsupportedMediaType(type || null, "application/x-www-form-urlencoded");
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(await readText(request, limit))) {
    if (key.includes("\u0000") || value.includes("\u0000"))
      throw ValidationError.field(key, "invalid_string", `${key}: contains the NUL character (U+0000)`);
    const seen = out[key];
    out[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

/**
 * The body as text, at most `limit` bytes, counted as they are read: a body sent chunked (no
 * Content-Length) is cut off at the limit, not read whole first. A declared size over the limit
 * is refused before anything is read.
 */
export async function readText(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw new PayloadTooLarge(limit);
  // With its size declared, the server reads exactly that much: the quick way. (Reading the body
  // chunk by chunk costs about 5 µs a request more.)
  if (declared !== null) return request.text();
  return Buffer.from(await readChunks(request, limit)).toString("utf8");
}

/** The body's bytes, at most `limit` (set by `setting`), with the same rules as readText. */
export async function readBytes(request: Request, limit: number, setting?: string): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw new PayloadTooLarge(limit, undefined, setting);
  if (declared !== null) return request.bytes();
  return readChunks(request, limit, setting);
}

/**
 * The body's bytes as sent (at most `limit`, the setting named `setting`), and whether they are
 * gzipped (Content-Encoding: gzip; gunzipBody unzips them). Another encoding is a 415.
 */
export async function readBytesEncoded(
  request: Request,
  limit: number,
  setting: string,
): Promise<{ bytes: Uint8Array; gzip: boolean }> {
  const encoding = (request.headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  if (encoding !== "identity" && encoding !== "gzip") throw new UnsupportedEncoding(encoding);
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > limit) throw new PayloadTooLarge(limit, undefined, setting);
  const bytes = declared ? await request.bytes() : await readChunks(request, limit, setting);
  return { bytes, gzip: encoding === "gzip" };
}

/** Gzipped bytes unzipped, held to `limit` as they come out: a small body that unzips to gigabytes is a 413, never memory. */
export function gunzipBody(bytes: Uint8Array, limit: number, setting: string): Uint8Array {
  try {
    return gunzipSync(bytes, { maxOutputLength: limit });
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE")
      throw new PayloadTooLarge(limit, "unzipped", setting);
    throw new BadRequest(
      `The body is not valid gzip (${(error as Error).message}), though its Content-Encoding says gzip.`,
      "invalid_body",
    );
  }
}

/** A body sent chunked (no Content-Length), counted as it is read and cut off at `limit`. */
async function readChunks(request: Request, limit: number, setting?: string): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) throw new PayloadTooLarge(limit, undefined, setting);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
