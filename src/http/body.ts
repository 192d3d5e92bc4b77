// Reading a JSON request body with our rules: the right Content-Type (415), at most the configured
// size even when the client lies or streams (413), valid JSON (400). Never a 500.
import { InvalidJson, PayloadTooLarge, UnsupportedMediaType } from "./errors.ts";

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

export async function readJson(request: Request, limit: number): Promise<unknown> {
  const type = request.headers.get("content-type");
  if (!type || !JSON_TYPE.test(type)) throw new UnsupportedMediaType(type);
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw new PayloadTooLarge(limit);
  const text = declared !== null ? await request.text() : await readLimited(request, limit);
  if (text.length > limit) throw new PayloadTooLarge(limit);
  if (text.trim() === "") throw new InvalidJson("the body is empty");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidJson((error as Error).message);
  }
}

async function readLimited(request: Request, limit: number): Promise<string> {
  if (!request.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) throw new PayloadTooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
