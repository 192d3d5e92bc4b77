// Domain errors (src/errors.ts) as HTTP: one table from kind to status, the headers a kind's
// details call for, and the JSON error shape LogSnag's clients read.
import type { AppError, ErrorKind, FieldIssue } from "../errors.ts";

export type ErrorBody = {
  success: false;
  statusCode: number;
  error: string;
  message: string;
  validation?: { body?: FieldIssue[]; query?: FieldIssue[] };
};

export const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  not_allowed: 405,
  conflict: 409,
  too_large: 413,
  unsupported: 415,
  rejected: 422,
  rate_limited: 429,
  client_gone: 499, // never sent: the client is gone; counted and logged as such
  internal: 500,
  unavailable: 503,
};

export function statusOf(error: AppError): number {
  return STATUS[error.kind];
}

export function errorHeaders(error: AppError): Record<string, string> {
  const headers: Record<string, string> = {};
  const { retryAfter, rateLimit, allow } = error.details;
  if (error.kind === "unauthenticated") headers["WWW-Authenticate"] = 'Bearer realm="signalboard"';
  if (retryAfter !== undefined) headers["Retry-After"] = String(retryAfter);
  if (rateLimit) {
    headers["RateLimit-Limit"] = String(rateLimit.limit);
    headers["RateLimit-Remaining"] = String(rateLimit.remaining);
    headers["RateLimit-Reset"] = String(rateLimit.reset);
    headers["RateLimit-Policy"] = `${rateLimit.limit};w=${rateLimit.windowSeconds}`;
  }
  if (allow) headers.Allow = allow.join(", ");
  return headers;
}

export function errorBody(error: AppError): ErrorBody {
  const body: ErrorBody = { success: false, statusCode: statusOf(error), error: error.code, message: error.message };
  if (error.details.issues) body.validation = { [error.details.location ?? "body"]: error.details.issues };
  return body;
}
