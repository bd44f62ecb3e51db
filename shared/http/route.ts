import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import type { z } from "zod";
import type { RepoAccess, Role } from "../access/roles.ts";
import type { Actor } from "../auth/actor.ts";
import type { JobRow } from "../ci/jobs/records.ts";
import type { WorkerIdentity } from "../ci/worker/index.ts";
import type { AppContext } from "../context.ts";
import type { Logger } from "../log.ts";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * Who may call a route. `public` needs no credentials; `user` needs any signed-in identity (the
 * operation checks the rest, for example org ownership); `{ repo: role }` resolves the `:repo`
 * parameter and needs at least that role on it (a repo the caller may not read answers 404).
 * Two kinds of caller are not people: `requestToken` is a CI job's request token, which must hold
 * a claim now (`call.job`), and `worker` is a CI worker's identity at claim (`call.worker`).
 */
export type Access = "public" | "user" | { repo: Role } | "requestToken" | "worker";

export interface Call<P, Q, B> {
  ctx: AppContext;
  actor: Actor | null;
  params: P;
  query: Q;
  body: B;
  /** Present when the route's access names a repo role. */
  repo: RepoAccess | undefined;
  requestId: string;
  log: Logger;
  /** The request headers, for a public route that decides about credentials itself. */
  headers: IncomingHttpHeaders;
  /** The body as received, for signatures over its exact bytes and for non-JSON uploads. */
  rawBody: Buffer | undefined;
  /** With `requestToken` access: the claimed job the token belongs to. */
  job: JobRow | undefined;
  /** With `worker` access: who is claiming. */
  worker: WorkerIdentity | undefined;
}

export type Reply =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { status: number; stream: Readable; headers: Record<string, string> };

type Schema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** One row of a declarative route table. */
export interface Route<
  PS extends Schema | undefined = Schema | undefined,
  QS extends Schema | undefined = Schema | undefined,
  BS extends Schema | undefined = Schema | undefined,
> {
  method: Method;
  /** Segments; `:name` is one segment, `:name*` one or more; `/-/` separates a repo name from the rest. */
  path: string;
  access: Access;
  /**
   * `report`: a CI job with its job token may call this repo route as a writer (the role the route
   * needs) on its own repo, about what the job tested only: the dispatcher refuses another
   * `body.branch` or `body.sequence` with 403 and fills a missing `body.sequence` with the job's
   * pinned sequence. Without it, a job
   * token may call only `GET` routes that need `reader` (shared/http/dispatch.ts, `jobTokenGate`).
   */
  jobToken?: "report";
  summary: string;
  params?: PS;
  query?: QS;
  body?: BS;
  handler: (call: Call<Out<PS>, Out<QS>, Out<BS>>) => Promise<Reply>;
}

// biome-ignore lint/suspicious/noExplicitAny: a table holds routes of many shapes
export type AnyRoute = Route<any, any, any>;

/** Declares a route with its handler typed from its schemas. */
export function route<
  PS extends Schema | undefined = undefined,
  QS extends Schema | undefined = undefined,
  BS extends Schema | undefined = undefined,
>(r: Route<PS, QS, BS>): AnyRoute {
  return r as AnyRoute;
}

/** Shorthands for replies. */
export const ok = (body: unknown): Reply => ({ status: 200, body });
export const created = (body: unknown): Reply => ({ status: 201, body });
export const noContent = (): Reply => ({ status: 204 });
