// zod → our error shape. Each issue's message names its field, because LogSnag's clients show only
// the messages, joined with commas.
import type { z } from "zod";
import { type FieldIssue, ValidationError } from "../errors.ts";

export function validate<S extends z.ZodType>(
  schema: S,
  input: unknown,
  location: "body" | "query" = "body",
): z.output<S> {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  throw new ValidationError(
    result.error.issues.map((issue) => toFieldIssue(issue, location)),
    location,
  );
}

function toFieldIssue(issue: z.core.$ZodIssue, location: "body" | "query"): FieldIssue {
  const path = issue.path.map(String).join(".");
  const message = `${path || `the request ${location}`}: ${describe(issue)}`;
  return { path, type: issue.code, message };
}

// zod's generic messages start with "Invalid input"; ours (set on the schemas) are kept as written.
function describe(issue: z.core.$ZodIssue): string {
  const generic = issue.message.startsWith("Invalid input") || issue.message.startsWith("Invalid option");
  if (issue.code === "invalid_type" && generic) {
    if (issue.input === undefined) return `is required (${article(issue.expected)})`;
    if (typeof issue.input === "number" && issue.expected === "number") return "must be a finite number";
    return `must be ${article(issue.expected)}, got ${typeName(issue.input)}`;
  }
  if (issue.code === "unrecognized_keys")
    return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.join(", ")}`;
  return issue.message;
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value;
}
