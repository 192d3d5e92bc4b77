// URLs of this server's routes, built from their paths: `href(paths.channel, { project, channel })`
// fills each `:name` with its value, percent-encoded, so a link names a route that exists and no
// parameter can be left out (the path's parameters are its type).
import type { PathParams } from "./routes.ts";

type QueryValue = string | number | undefined | null | (string | number)[];

/** A query string from these parameters ("?a=1&b=2", or "" when none has a value); lists repeat their name. */
export function query(params: Record<string, QueryValue>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (Array.isArray(value)) for (const v of value) search.append(key, String(v));
    else if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

type Values<Path extends string> = [PathParams<Path>] extends [never]
  ? [values?: Record<string, never>, search?: Record<string, QueryValue>]
  : [values: Record<PathParams<Path>, string | number>, search?: Record<string, QueryValue>];

/** The URL of the route at `path`, with its parameters and an optional query string. */
export function href<Path extends string>(path: Path, ...[values, search]: Values<Path>): string {
  const filled = values
    ? path.replace(/:(\w+)/g, (_, name: string) =>
        encodeURIComponent(String((values as Record<string, string | number>)[name])),
      )
    : path;
  return search ? filled + query(search) : filled;
}
