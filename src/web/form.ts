import { z } from "zod";
import { parseSeconds } from "../domain/units.ts";
import { ValidationError } from "../errors.ts";

// Reading submitted forms: every field is a string or absent (an unchecked box is absent).
export function field(body: unknown, name: string): string {
  if (typeof body !== "object" || body === null) return "";
  const value = (body as Record<string, unknown>)[name];
  return typeof value === "string" ? value : "";
}

/** A form field in a route's `form` schema, as field() reads it: its text, or "" (absent, or sent twice). */
export const text = z.preprocess((value) => (typeof value === "string" ? value : ""), z.string());

/** A field that may repeat in a route's `form` schema, as fields() reads it: its values that are not empty. */
export const list = z.preprocess((value) => fields({ value }, "value"), z.array(z.string()));

/** A query parameter in a route's `query` schema: its first value (as URLSearchParams.get), or undefined. */
export const param = z.array(z.string()).transform((values) => values[0]);

/** The query of a route whose project is named in it (`?project=`, "" without one). */
export const projectQuery = z.object({ project: param.transform((project) => project ?? "") });

/** Every value of a field that may repeat (ticked boxes of one name). */
export function fields(body: unknown, name: string): string[] {
  if (typeof body !== "object" || body === null) return [];
  const value = (body as Record<string, unknown>)[name];
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === "string" && v !== "");
}

/**
 * A path to return to after sign-in: only our own, never another site. Browsers drop tabs and
 * newlines from URLs ("/\t/evil.example" is "//evil.example") and read "\\" as "/", so only visible
 * ASCII is allowed, with no second slash or backslash at the start.
 */
export function safeNext(next: string): string {
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(next) ? next : "/";
}

/** A validation error's messages by field, without the "field: " prefix, for showing beside inputs. */
export function fieldErrors(error: unknown): Record<string, string> | null {
  if (!(error instanceof ValidationError)) return null;
  return Object.fromEntries(error.issues.map((i) => [i.path, i.message.replace(/^[^:]+: /, "")]));
}

/**
 * A form's duration field in seconds (seconds, or 90s, 15m, 12h, 1d), undefined when empty; a
 * field that is no duration is noted in `errors` under its name.
 */
export function durationField(f: Record<string, string>, errors: Record<string, string>) {
  return (name: string): number | undefined => {
    if (!f[name]) return undefined;
    try {
      return parseSeconds(f[name]!);
    } catch {
      errors[name] = "use seconds, or a duration such as 90s, 15m, 12h or 1d";
      return undefined;
    }
  };
}
