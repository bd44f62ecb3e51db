import type { ApiError } from "./types.ts";

/** An error answer of the API: its HTTP status and the server's `code` (docs/errors.md). */
export class QuireApiError extends Error {
  readonly status: number;
  readonly code: string;
  /** The whole error body, with the details some codes add (conflicts, failed policies). */
  readonly body: ApiError;
  readonly method: string;
  readonly path: string;

  constructor(method: string, path: string, status: number, body: ApiError) {
    super(`${method} ${path}: ${status} ${body.code}: ${body.error}`);
    this.name = "QuireApiError";
    this.method = method;
    this.path = path;
    this.status = status;
    this.code = body.code;
    this.body = body;
  }
}

/** The error body of a failed reply, made up from the status when the server sent no JSON. */
export function errorBodyOf(status: number, body: unknown): ApiError {
  if (typeof body === "object" && body !== null && typeof (body as ApiError).code === "string")
    return body as ApiError;
  const text = typeof body === "string" && body.trim() !== "" ? body.trim().slice(0, 200) : `HTTP ${status}`;
  return { code: status >= 500 ? "SERVER_ERROR" : "HTTP_ERROR", error: text };
}
