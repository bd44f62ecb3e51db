import type { z } from "zod";
import {
  type ClaimResponse,
  claimResponse,
  heartbeatResponse,
  jobResponse,
  tokenResponse,
  urlResponse,
} from "../shared/api/ci.ts";
import { fileResponse } from "../shared/api/content.ts";
import { checkRunResponse } from "../shared/api/review.ts";
import { revealSecretsResponse } from "../shared/api/secrets.ts";

/**
 * The worker's side of the scheduler and repo API (docs/ci-scheduler.md, "The workflow"): one
 * function per call, each answer checked against the wire schema the server declares.
 */

/** Calls may not hang a job for ever: each gets this long (archives stream on without it). */
const CALL_TIMEOUT_MS = 60_000;

/** A non-2xx answer, with the server's error code when it sent one. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  constructor(what: string, status: number, code: string | undefined, message: string | undefined) {
    super(`${what}: HTTP ${status}${code ? ` ${code}` : ""}${message ? `: ${message}` : ""}`);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

async function call<S extends z.ZodType>(
  what: string,
  url: string,
  init: { method: string; bearer: string; json?: unknown; body?: Buffer; contentType?: string },
  schema: S,
): Promise<z.output<S>> {
  const headers: Record<string, string> = { authorization: `Bearer ${init.bearer}` };
  let body: string | Buffer | undefined;
  if (init.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(init.json);
  } else if (init.body !== undefined) {
    headers["content-type"] = init.contentType ?? "application/octet-stream";
    body = init.body;
  }
  const res = await fetch(url, {
    method: init.method,
    headers,
    body,
    redirect: "error",
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  const text = await res.text();
  if (!res.ok) {
    let parsed: { code?: unknown; error?: unknown } = {};
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON (a proxy's page): the status says enough.
    }
    throw new ApiError(
      what,
      res.status,
      typeof parsed.code === "string" ? parsed.code : undefined,
      typeof parsed.error === "string" ? parsed.error : undefined,
    );
  }
  if (res.status === 204) return schema.parse(undefined);
  return schema.parse(JSON.parse(text));
}

/** `POST /claim`: a job, or null when nothing is queued (204). */
export async function claim(schedulerUrl: string, credential: string): Promise<ClaimResponse | null> {
  const job = await call(
    "claim",
    `${schedulerUrl}/claim`,
    { method: "POST", bearer: credential },
    claimResponse.optional(),
  );
  return job ?? null;
}

/** The calls one claimed job makes, with its request token and the URLs the claim gave. */
export interface JobApi {
  exchangeToken(audience: string, checkName: string): Promise<string>;
  presignArchive(): Promise<string>;
  readFile(jwt: string, path: string): Promise<Buffer>;
  reportCheck(
    jwt: string,
    checkName: string,
    status: "pending" | "passed" | "failed",
    logUrl?: string,
    imageDigest?: string,
  ): Promise<void>;
  /** `partial`: the log so far of a running check (docs/ci-worker.md, "Logs"); else the whole log. */
  uploadLog(checkName: string, log: Buffer, partial?: boolean): Promise<string>;
  /** The secrets `names` that `checkName` lists, by name (values decoded), and the names the repo lacks. */
  revealSecrets(
    checkName: string,
    names: string[],
  ): Promise<{ values: Map<string, string>; missing: string[] }>;
  heartbeat(): Promise<void>;
  complete(status: "passed" | "failed", error?: string): Promise<void>;
}

export function jobApi(job: ClaimResponse, schedulerUrl: string): JobApi {
  const token = job.request_token;
  // Repo and check names keep their slashes in paths: the routes read them as `:repo*`, `:check*`.
  const repoBase = `${job.api_url}/repos/${job.repo}/-`;
  return {
    async exchangeToken(audience, checkName) {
      const body = { audience, check_name: checkName };
      const res = await call(
        "token exchange",
        job.oidc_token_url,
        { method: "POST", bearer: token, json: body },
        tokenResponse,
      );
      return res.token;
    },
    async presignArchive() {
      const res = await call(
        "archive presign",
        `${repoBase}/archive/presign`,
        { method: "POST", bearer: token },
        urlResponse,
      );
      return res.url;
    },
    async readFile(jwt, path) {
      const query = new URLSearchParams({ branch: job.branch, at: String(job.sequence) });
      const url = `${repoBase}/file/${path}?${query}`;
      const res = await call(`reading ${path}`, url, { method: "GET", bearer: jwt }, fileResponse);
      return Buffer.from(res.content, "base64");
    },
    async reportCheck(jwt, checkName, status, logUrl, imageDigest) {
      const body = {
        branch: job.branch,
        check_name: checkName,
        status,
        ...(logUrl ? { log_url: logUrl } : {}),
        ...(imageDigest ? { image_digest: imageDigest } : {}),
      };
      await call(
        `reporting ${checkName} ${status}`,
        `${repoBase}/check`,
        { method: "POST", bearer: jwt, json: body },
        checkRunResponse,
      );
    },
    async uploadLog(checkName, log, partial = false) {
      const url = `${repoBase}/check/${checkName}/logs${partial ? "?partial=true" : ""}`;
      const init = { method: "POST", bearer: token, body: log, contentType: "text/plain; charset=utf-8" };
      return (await call(`uploading the log of ${checkName}`, url, init, urlResponse)).url;
    },
    async revealSecrets(checkName, names) {
      const res = await call(
        `fetching the secrets of ${checkName}`,
        `${repoBase}/secrets/reveal`,
        { method: "POST", bearer: token, json: { check_name: checkName, names } },
        revealSecretsResponse,
      );
      const values = Object.entries(res.values).map(
        ([name, b64]) => [name, Buffer.from(b64, "base64").toString("utf8")] as const,
      );
      return { values: new Map(values), missing: res.missing };
    },
    async heartbeat() {
      await call(
        "heartbeat",
        `${schedulerUrl}/jobs/${job.id}/heartbeat`,
        { method: "POST", bearer: token },
        heartbeatResponse,
      );
    },
    async complete(status, error) {
      const body = error === undefined ? { status } : { status, error };
      await call(
        "complete",
        `${schedulerUrl}/jobs/${job.id}/complete`,
        { method: "POST", bearer: token, json: body },
        jobResponse,
      );
    },
  };
}
