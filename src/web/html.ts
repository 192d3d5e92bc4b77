// HTML templates that escape by default. Every interpolation is escaped unless it is already Html
// (another template, or the sanitiser's output wrapped with trusted()). Attribute values must be
// quoted in templates; escaping covers both quote kinds.
import { escapeHtml } from "../domain/safe-html.ts";

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (value === null || value === undefined || value === false) return "";
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/** Marks text as safe HTML. Only for our own markup and the markdown sanitiser's output. */
export function trusted(markup: string): Html {
  return new Html(markup);
}

/** A path segment or query value, percent-encoded (and then escaped by html`` as usual). */
export const seg = (value: string | number) => encodeURIComponent(String(value));

export function query(params: Record<string, string | number | undefined | null | (string | number)[]>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (Array.isArray(value)) for (const v of value) search.append(key, String(v));
    else if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}
