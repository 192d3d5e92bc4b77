// Domain errors: what went wrong, by kind and stable code, with a message that says what to fix.
// Services throw these; nothing here knows HTTP. http/errors.ts maps each kind to a status and
// headers in one table, and renders the error shape clients read.

export type ErrorKind =
  | "invalid" // the input is wrong
  | "unauthenticated" // no credential, or one that grants nothing
  | "forbidden" // a credential that does not allow this
  | "not_found"
  | "not_allowed" // a known path with the wrong method
  | "conflict" // the state does not allow it (a name taken, a row deleted meanwhile)
  | "rejected" // understood and well-formed, but refused (an Idempotency-Key reused for another request)
  | "too_large"
  | "unsupported" // a content type we do not read
  | "rate_limited"
  | "unavailable" // storage cannot take it now, or the server is stopping: retry later
  | "client_gone" // the client left before its answer
  | "internal"; // a bug: nothing of it is shown

export type FieldIssue = { path: string; type: string; message: string };

export type ErrorDetails = {
  /** Seconds after which a retry may succeed. */
  retryAfter?: number;
  rateLimit?: { limit: number; remaining: number; reset: number; windowSeconds: number };
  /** The methods a path answers to (not_allowed). */
  allow?: string[];
  /** The field problems of an invalid input, and where they are. */
  issues?: FieldIssue[];
  location?: "body" | "query";
};

export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
  }
}

export class ValidationError extends AppError {
  constructor(issues: FieldIssue[], location: "body" | "query" = "body") {
    super("invalid", "validation_error", summarise(issues, location), { issues, location });
  }

  get issues(): FieldIssue[] {
    return this.details.issues!;
  }

  static field(path: string, type: string, message: string): ValidationError {
    return new ValidationError([{ path, type, message }]);
  }
}

function summarise(issues: FieldIssue[], location: "body" | "query"): string {
  const first = issues[0]?.message ?? (location === "body" ? "the request body is invalid" : "the query is invalid");
  return issues.length > 1 ? `${first} (and ${issues.length - 1} more: see validation.${location})` : first;
}

export class InvalidJson extends AppError {
  constructor(detail: string) {
    const message = `The request body is not valid JSON (${detail}). Send a JSON object.`;
    super("invalid", "invalid_json", message, {
      issues: [{ path: "", type: "invalid_json", message }],
      location: "body",
    });
  }
}

export class BadRequest extends AppError {
  constructor(message: string, code = "bad_request") {
    super("invalid", code, message);
  }
}

export class Unauthorized extends AppError {
  constructor(message: string) {
    super("unauthenticated", "unauthorized", message);
  }
}

/** A dashboard page asked for without a live session: http sends the browser to sign in (or set up). */
export class SignInRequired extends AppError {
  constructor(readonly setup = false) {
    super(
      "unauthenticated",
      "sign_in_required",
      setup ? "Set up the owner account first." : "Sign in to see this page.",
    );
  }
}

export class Forbidden extends AppError {
  constructor(message: string) {
    super("forbidden", "forbidden", message);
  }
}

export class NotFound extends AppError {
  constructor(message: string) {
    super("not_found", "not_found", message);
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
  constructor(method: string, path: string, allowed: string[], hint = "") {
    super(
      "not_allowed",
      "method_not_allowed",
      `${method} is not allowed on ${path}; use ${allowed.join(" or ")}.${hint && ` ${hint}`}`,
      { allow: allowed },
    );
  }
}

/** Ids a request names that exist but are not the project's (or do not exist): 422, each named in `validation`. */
export class NotInProject extends AppError {
  constructor(issues: FieldIssue[]) {
    super("rejected", "not_in_project", summarise(issues, "body"), { issues, location: "body" });
  }
}

export class Conflict extends AppError {
  constructor(message: string) {
    super("conflict", "conflict", message);
  }
}

export class PayloadTooLarge extends AppError {
  /** `unzipped`: the body was small enough as sent, not once unzipped. `setting`: the limit's name. */
  constructor(limit: number, unzipped?: "unzipped", setting: string = "SIGNALBOARD_BODY_LIMIT") {
    super(
      "too_large",
      "payload_too_large",
      `The request body is larger${unzipped ? " once unzipped" : ""} than the limit of ${limit} bytes (${setting}). Send a smaller body.`,
    );
  }
}

export class UnsupportedMediaType extends AppError {
  constructor(got: string | null, wanted = "application/json") {
    const how = wanted === "application/json" ? " Send the body as JSON with Content-Type: application/json." : "";
    super(
      "unsupported",
      "unsupported_media_type",
      `Content-Type must be ${wanted}${got ? `, got "${got}"` : " (the header is missing)"}.${how}`,
    );
  }
}

export class UnsupportedEncoding extends AppError {
  constructor(got: string) {
    super(
      "unsupported",
      "unsupported_media_type",
      `Content-Encoding "${got.slice(0, 40)}" is not read here: send the body as it is, or with Content-Encoding: gzip.`,
    );
  }
}

export class RateLimited extends AppError {
  constructor(retryAfter: number, rateLimit?: ErrorDetails["rateLimit"]) {
    super(
      "rate_limited",
      "rate_limited",
      `Too many requests. Retry after ${retryAfter} second${retryAfter === 1 ? "" : "s"}.`,
      { retryAfter, rateLimit },
    );
  }
}

export class StorageUnavailable extends AppError {
  /** `read`: it failed a read, so there is nothing of the request's to have stored or not. */
  constructor(detail: string, { read = false } = {}) {
    super(
      "unavailable",
      "storage_unavailable",
      `Storage is unavailable (${detail})${read ? "" : "; nothing was stored"}. Retry in a few seconds.`,
      { retryAfter: 5 },
    );
  }
}

/** A read that ran out of its time budget (SIGNALBOARD_QUERY_TIMEOUT), or that could not start within it: it was stopped. */
export class QueryTimeout extends AppError {
  constructor(budgetMs: number, waited = false) {
    const why = waited
      ? `Too many questions of this kind are being answered at once; this one could not start within ${seconds(budgetMs)}`
      : `This question took longer than the ${seconds(budgetMs)} a query may take (SIGNALBOARD_QUERY_TIMEOUT) and was stopped`;
    super(
      "unavailable",
      "query_timeout",
      `${why}. Narrow it (a shorter time range, a project or channel, more specific words or tags) or retry in a few seconds.`,
      { retryAfter: 5 },
    );
  }
}

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

export class ShuttingDown extends AppError {
  constructor() {
    super("unavailable", "shutting_down", "The server is shutting down. Reconnect in a few seconds.", {
      retryAfter: 2,
    });
  }
}

/**
 * The client went away before its answer. Nothing is sent, and it is not a failure of ours; a
 * write it asked for is not made if it left before the write's transaction began.
 */
export class ClientGone extends AppError {
  constructor() {
    super("client_gone", "client_closed_request", "The client closed the connection before the answer.");
  }
}

export class IdempotencyKeyReused extends AppError {
  constructor() {
    super(
      "rejected",
      "idempotency_key_reused",
      "This Idempotency-Key was already used for a different request. Use a new key for each distinct request, and the same key only to retry it.",
    );
  }
}

export class Internal extends AppError {
  constructor() {
    super(
      "internal",
      "internal_error",
      "Something went wrong on our side; it has been logged. Retry, and report it if it persists.",
    );
  }
}

/** An error as plain data, to cross a thread (the writer thread's answers). */
export type PlainError =
  | { kind: ErrorKind; code: string; message: string; details: ErrorDetails }
  | { kind: null; message: string };

export function toPlain(error: unknown): PlainError {
  if (error instanceof AppError)
    return { kind: error.kind, code: error.code, message: error.message, details: error.details };
  return { kind: null, message: String((error as Error)?.message ?? error) };
}

export function fromPlain(plain: PlainError): Error {
  if (plain.kind === null) return new Error(plain.message);
  if (plain.code === "validation_error" && plain.details.issues)
    return new ValidationError(plain.details.issues, plain.details.location);
  return new AppError(plain.kind, plain.code, plain.message, plain.details);
}
