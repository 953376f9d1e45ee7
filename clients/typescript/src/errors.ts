/**
 * Errors thrown by the mnemod client. Every error the server answers is a JSON body
 * `{"error": {"code", "message", ...}}`; the client throws it as an {@link ApiError}
 * carrying the code, the message, the field it names and the rest of the error object.
 */

/** Base class of everything this package throws. */
export class MnemodError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The server could not be reached, or the request timed out. */
export class TransportError extends MnemodError {}

/** The server answered with an error status. */
export class ApiError extends MnemodError {
  /** HTTP status. */
  readonly status: number;
  /** snake_case error code: `invalid_field`, `non_monotonic_timestamp`, ... */
  readonly code: string;
  /** The request field the error names, when it names one. */
  readonly field: string | undefined;
  /** Every field of the error object (`last_timestamp`, `line`, ...). */
  readonly details: Record<string, unknown>;
  /** The `Retry-After` header in seconds, when the server sent one. */
  readonly retryAfter: number | undefined;
  /** The server's own sentence (also in `message`, after the status and code). */
  readonly serverMessage: string;

  constructor(status: number, code: string, serverMessage: string,
              details: Record<string, unknown> = {}, retryAfter?: number) {
    super(`${status} ${code}: ${serverMessage}`);
    this.status = status;
    this.code = code;
    this.serverMessage = serverMessage;
    this.field = typeof details.field === "string" ? details.field : undefined;
    this.details = details;
    this.retryAfter = retryAfter;
  }
}

/** Build the ApiError for an error answer (body: the decoded JSON, or the text). */
export function errorFromResponse(status: number, body: unknown, retryAfter?: number): ApiError {
  const err = body && typeof body === "object" ? (body as { error?: unknown }).error : undefined;
  if (err && typeof err === "object") {
    const e = err as Record<string, unknown>;
    return new ApiError(status, String(e.code ?? "error"), String(e.message ?? ""), e, retryAfter);
  }
  return new ApiError(status, `http_${status}`, String(body ?? "").slice(0, 400), {}, retryAfter);
}
