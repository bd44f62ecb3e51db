/**
 * Quire's one error vocabulary. Every failure a client can see carries one of these codes, and
 * `statusOf` is the only place that maps a code to an HTTP status.
 */
export const errorStatus = {
  VALIDATION_FAILED: 400,
  MALFORMED_JSON: 400,
  INVALID_NAME: 400,
  INVALID_PATH: 400,
  INVALID_CONTENT: 400,
  DUPLICATE_PATH: 400,
  SEQUENCE_OUT_OF_RANGE: 400,
  INVALID_DURATION: 400,
  WEBHOOK_URL_INVALID: 400,
  WEBHOOK_URL_REFUSED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  SECRETS_BLOCKED: 403,
  INVITE_EMAIL_MISMATCH: 403,
  POLICY_DENIED: 403,
  SELF_APPROVAL: 403,
  SIGNATURE_INVALID: 403,
  URL_EXPIRED: 403,
  NOT_FOUND: 404,
  ORG_NOT_FOUND: 404,
  REPO_NOT_FOUND: 404,
  BRANCH_NOT_FOUND: 404,
  COMMIT_NOT_FOUND: 404,
  FILE_NOT_FOUND: 404,
  MEMBER_NOT_FOUND: 404,
  INVITE_NOT_FOUND: 404,
  ROLE_NOT_FOUND: 404,
  PROPOSAL_NOT_FOUND: 404,
  COMMENT_NOT_FOUND: 404,
  RELEASE_NOT_FOUND: 404,
  SUBSCRIPTION_NOT_FOUND: 404,
  JOB_NOT_FOUND: 404,
  LOG_NOT_FOUND: 404,
  SECRET_NOT_FOUND: 404,
  ISSUE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  ORG_EXISTS: 409,
  REPO_EXISTS: 409,
  BRANCH_EXISTS: 409,
  ORG_NOT_EMPTY: 409,
  BRANCH_NOT_ACTIVE: 409,
  BRANCH_DRAFT: 409,
  MERGE_CONFLICT: 409,
  REBASE_CONFLICT: 409,
  PROPOSAL_EXISTS: 409,
  PROPOSAL_NOT_OPEN: 409,
  ISSUE_NOT_OPEN: 409,
  ISSUE_NOT_CLOSED: 409,
  ISSUE_REF_EXISTS: 409,
  RELEASE_EXISTS: 409,
  MAIN_BRANCH_PROTECTED: 409,
  LAST_OWNER: 409,
  INVITE_USED: 409,
  CI_NOT_CONFIGURED: 409,
  CI_CONFIG_INVALID: 409,
  CI_NOTHING_TO_RUN: 409,
  HEAD_MOVED: 409,
  EMPTY_COMMIT: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  IDEMPOTENCY_ANSWER_LOST: 409,
  LOG_FINAL: 409,
  CHECKPOINT_UNKNOWN: 409,
  COSIGNATURES_LIMITED: 409,
  INVITE_EXPIRED: 410,
  INVITE_REVOKED: 410,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  IDEMPOTENCY_KEY_REUSED: 422,
  LOG_UPLOADS_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** HTTP status for a code. */
export function statusOf(code: ErrorCode): number {
  return errorStatus[code];
}

/**
 * A failure the caller caused or may act on. `details` are extra body fields the spec asks for
 * (for example `conflicts` or `policies`); they are rendered beside `code` and `error`.
 */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "DomainError";
    this.code = code;
    this.details = opts.details;
  }

  get status(): number {
    return statusOf(this.code);
  }
}

/** Shorthand used by modules: `fail("REPO_NOT_FOUND", "...")` reads as the rule it enforces. */
export function fail(code: ErrorCode, message: string, details?: Record<string, unknown>): never {
  throw new DomainError(code, message, details === undefined ? {} : { details });
}
