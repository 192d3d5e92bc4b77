// The error catalogue: every failure a client can see has a stable code, an HTTP status and a
// message that says what to fix. Services throw these; the one onError (http/on-error.ts) renders
// them. Nothing here imports Elysia, so services may throw them freely.

export type FieldIssue = { path: string; type: string; message: string };

export type ErrorBody = {
  success: false;
  statusCode: number;
  error: string;
  message: string;
  validation?: { body?: FieldIssue[]; query?: FieldIssue[] };
};

export class AppError extends Error {
  readonly headers: Record<string, string>;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.headers = headers;
  }

  toBody(): ErrorBody {
    return { success: false, statusCode: this.status, error: this.code, message: this.message };
  }
}

export class ValidationError extends AppError {
  constructor(
    readonly issues: FieldIssue[],
    readonly location: "body" | "query" = "body",
  ) {
    super(400, "validation_error", summarise(issues));
  }

  static field(path: string, type: string, message: string): ValidationError {
    return new ValidationError([{ path, type, message }]);
  }

  override toBody(): ErrorBody {
    return { ...super.toBody(), validation: { [this.location]: this.issues } };
  }
}

function summarise(issues: FieldIssue[]): string {
  const first = issues[0]?.message ?? "the request body is invalid";
  return issues.length > 1 ? `${first} (and ${issues.length - 1} more: see validation.body)` : first;
}

export class InvalidJson extends AppError {
  constructor(detail: string) {
    super(400, "invalid_json", `The request body is not valid JSON (${detail}). Send a JSON object.`);
  }
  override toBody(): ErrorBody {
    return { ...super.toBody(), validation: { body: [{ path: "", type: "invalid_json", message: this.message }] } };
  }
}

export class BadRequest extends AppError {
  constructor(message: string, code = "bad_request") {
    super(400, code, message);
  }
}

export class Unauthorized extends AppError {
  constructor(message: string) {
    super(401, "unauthorized", message, { "WWW-Authenticate": 'Bearer realm="signalboard"' });
  }
}

export class Forbidden extends AppError {
  constructor(message: string) {
    super(403, "forbidden", message);
  }
}

export class NotFound extends AppError {
  constructor(message: string) {
    super(404, "not_found", message);
  }
}

/** The same words wherever a project name is not found: what to do about it included. */
export class UnknownProject extends NotFound {
  constructor(name: string) {
    super(`Project "${name}" does not exist. Create it in the dashboard or with: signalboard project create ${name}`);
  }
}

/** Channel names are per project: a channel filter alone names nothing. */
export class ChannelNeedsProject extends BadRequest {
  constructor() {
    super("channel filters need a project too: add project=<name>", "invalid_query");
  }
}

export class MethodNotAllowed extends AppError {
  constructor(method: string, path: string, allowed: string[]) {
    super(405, "method_not_allowed", `${method} is not allowed on ${path}; use ${allowed.join(" or ")}.`, { Allow: allowed.join(", ") });
  }
}

export class Conflict extends AppError {
  constructor(message: string) {
    super(409, "conflict", message);
  }
}

export class PayloadTooLarge extends AppError {
  constructor(limit: number) {
    super(413, "payload_too_large", `The request body is larger than the limit of ${limit} bytes (SIGNALBOARD_BODY_LIMIT). Send a smaller body.`);
  }
}

export class UnsupportedMediaType extends AppError {
  constructor(got: string | null, wanted = "application/json") {
    const how = wanted === "application/json" ? " Send the body as JSON with Content-Type: application/json." : "";
    super(415, "unsupported_media_type", `Content-Type must be ${wanted}${got ? `, got "${got}"` : " (the header is missing)"}.${how}`);
  }
}

export class RateLimited extends AppError {
  constructor(retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(429, "rate_limited", `Too many requests. Retry after ${retryAfterSeconds} second${retryAfterSeconds === 1 ? "" : "s"}.`, {
      ...headers,
      "Retry-After": String(retryAfterSeconds),
    });
  }
}

export class StorageUnavailable extends AppError {
  constructor(detail: string) {
    super(503, "storage_unavailable", `Storage is unavailable (${detail}); nothing was stored. Retry in a few seconds.`, { "Retry-After": "5" });
  }
}

/**
 * The client went away before its answer (nginx's 499). Nothing is sent, and it is not a failure
 * of ours; a write it asked for is not made if it left before the write's transaction began.
 */
export class ClientGone extends AppError {
  constructor() {
    super(499, "client_closed_request", "The client closed the connection before the answer.");
  }
}

export class ShuttingDown extends AppError {
  constructor() {
    super(503, "shutting_down", "The server is shutting down. Reconnect in a few seconds.", { "Retry-After": "2" });
  }
}

/** Not an error: a redirect thrown from a guard (a page that needs sign-in sends you to /login). */
export class SeeOther extends AppError {
  constructor(readonly location: string) {
    super(303, "see_other", `See ${location}`, { Location: location });
  }
}

export class IdempotencyKeyReused extends AppError {
  constructor() {
    super(422, "idempotency_key_reused", "This Idempotency-Key was already used for a different request. Use a new key for each distinct request, and the same key only to retry it.");
  }
}

/** An error as plain data, to cross a thread (the writer thread's answers). */
export type PlainError = { status: number; code: string; message: string; headers: Record<string, string>; issues?: FieldIssue[]; location?: "body" | "query" } | { status: null; message: string };

export function toPlain(error: unknown): PlainError {
  if (error instanceof ValidationError) return { status: error.status, code: error.code, message: error.message, headers: error.headers, issues: error.issues, location: error.location };
  if (error instanceof AppError) return { status: error.status, code: error.code, message: error.message, headers: error.headers };
  return { status: null, message: String((error as Error)?.message ?? error) };
}

export function fromPlain(plain: PlainError): Error {
  if (plain.status === null) return new Error(plain.message);
  if (plain.issues) return new ValidationError(plain.issues, plain.location);
  return new AppError(plain.status, plain.code, plain.message, plain.headers);
}
