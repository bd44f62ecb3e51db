import { describe, expect, it } from "vitest";
import { allRoutes } from "../../functions/groups.ts";
import { styles } from "../../functions/web/assets.ts";
import { presignArchiveUrl } from "../../shared/archives/presign.ts";
import { signedLogUrl } from "../../shared/ci/jobs/logs.ts";
import type { ErrorCode } from "../../shared/errors.ts";
import { api, okBody } from "../support/api.ts";
import { startTestApp } from "../support/app.ts";
import { b64, type Client } from "../support/client.ts";
import { errorOf, useFixture } from "../support/world.ts";
import { cosignatureBody } from "../transparency/cosignature.ts";
import {
  authzEnv,
  type Call,
  identities,
  isJobPersona,
  isRepoRolePersona,
  type Persona,
  personas,
  routeKey,
  type SignedIn,
  send,
  World,
} from "./world.ts";

/**
 * The authorization matrix: for every endpoint and every kind of caller, the exact HTTP status.
 * The expectations come from the access rules (DESIGN.md, "Facts for the spec's gaps"), not from
 * the code. Rows are keyed "METHOD /pattern" as in the route tables; a `[variant]` suffix adds a
 * second row for one route (commit to a branch vs. to main). To extend for a new endpoint, add a
 * row to `matrix` and its request to `requests`; the coverage tests fail until both exist.
 *
 * Every request goes over HTTP to the real server. Cells whose request mutates build their own
 * fresh object first (branch, repo, org, invitation, member, grant, proposal, comment, release),
 * so no cell depends on another or on the order they run in. `[own]` and `[another's]` rows
 * split the routes whose rule depends on who authored the object (author or maintainer), or who
 * created it (a subscription: its creator or a global admin).
 *
 * The SSE routes answer 200 with a stream that never ends: their cells read only the status and
 * headers and then abort the request (`send` in world.ts), and a 200 must be `text/event-stream`.
 *
 * The last two columns are CI jobs with their job token (docs/ci-identity.md, "Job tokens on the
 * repo API"): `job` runs on the fixture repo's `feature` branch, `otherRepoJob` on another repo of
 * the org. A job reads its own repo (GET routes that need reader) and reports check runs there;
 * any other repo is 404 as if absent, and every other route is 403 before any repo is looked up.
 */

type Statuses = Record<Persona, number>;

/** One row, its statuses in the order of the column header. */
function s(...statuses: number[]): Statuses {
  if (statuses.length !== personas.length) throw new Error(`a row needs ${personas.length} statuses`);
  return Object.fromEntries(personas.map((p, i) => [p, statuses[i]])) as Statuses;
}

// biome-ignore format: the matrix stays aligned in columns
const matrix: Record<string, Statuses> = {
  //                                                        anonymous  stranger  reader  writer  maintainer  admin  orgOwner  orgMember  globalAdmin  job  otherRepoJob
  "GET /healthz":                                         s(200,       200,      200,    200,    200,        200,   200,      200,       200,         200, 200),
  "GET /openapi.json":                                    s(200,       200,      200,    200,    200,        200,   200,      200,       200,         200, 200),
  "GET /.well-known/openid-configuration":               s(200,       200,      200,    200,    200,        200,   200,      200,       200,         200, 200),
  "GET /.well-known/jwks.json":                          s(200,       200,      200,    200,    200,        200,   200,      200,       200,         200, 200),
  "GET /.well-known/quire-log-key":                      s(200,       200,      200,    200,    200,        200,   200,      200,       200,         200, 200),
  "GET /auth/cli":                                        s(200,       200,      200,    200,    200,        200,   200,      200,       200,         200, 200),
  // Browser sign-in is public: credentials do not matter. Without this browser's login cookie a
  // callback is 400; a sign-out without a session only clears the cookie (303 to the sign-out page).
  "GET /auth/login":                                      s(302,       302,      302,    302,    302,        302,   302,      302,       302,         302, 302),
  "GET /auth/callback":                                   s(400,       400,      400,    400,    400,        400,   400,      400,       400,         400, 400),
  "GET /auth/logout":                                     s(200,       200,      200,    200,    200,        200,   200,      200,       200,         200, 200),
  "POST /auth/logout":                                    s(303,       303,      303,    303,    303,        303,   303,      303,       303,         303, 303),

  "GET /me":                                              s(401,       200,      200,    200,    200,        200,   200,      200,       200,         403, 403),
  "POST /orgs":                                           s(401,       201,      201,    201,    201,        201,   201,      201,       201,         403, 403),
  "GET /orgs":                                            s(401,       200,      200,    200,    200,        200,   200,      200,       200,         403, 403),
  "GET /orgs/:org":                                       s(401,       404,      200,    200,    200,        200,   200,      200,       200,         403, 403),
  "DELETE /orgs/:org":                                    s(401,       404,      403,    403,    403,        403,   204,      403,       204,         403, 403),
  "GET /orgs/:org/repos":                                 s(401,       404,      200,    200,    200,        200,   200,      200,       200,         403, 403),
  "GET /orgs/:org/members":                               s(401,       404,      200,    200,    200,        200,   200,      200,       200,         403, 403),
  "POST /orgs/:org/members/:identity":                    s(401,       404,      403,    403,    403,        403,   201,      403,       201,         403, 403),
  "DELETE /orgs/:org/members/:identity":                  s(401,       404,      403,    403,    403,        403,   204,      403,       204,         403, 403),
  "GET /orgs/:org/invites":                               s(401,       404,      403,    403,    403,        403,   200,      403,       200,         403, 403),
  "POST /orgs/:org/invites":                              s(401,       404,      403,    403,    403,        403,   201,      403,       201,         403, 403),
  "POST /orgs/:org/invites/:token/accept [to another]":   s(401,       403,      403,    403,    403,        403,   403,      403,       403,         403, 403),
  "POST /orgs/:org/invites/:token/accept [to caller]":    s(401,       200,      200,    200,    200,        200,   200,      200,       200,         403, 403),
  "DELETE /orgs/:org/invites/:id":                        s(401,       404,      403,    403,    403,        403,   204,      403,       204,         403, 403),

  "GET /repos/:repo*/-/roles":                            s(401,       404,      403,    403,    403,        200,   200,      403,       200,         403, 403),
  "PUT /repos/:repo*/-/roles/:identity":                  s(401,       404,      403,    403,    403,        200,   200,      403,       200,         403, 403),
  "DELETE /repos/:repo*/-/roles/:identity":               s(401,       404,      403,    403,    403,        204,   204,      403,       204,         403, 403),

  "GET /repos/:repo*/-/secrets":                          s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "PUT /repos/:repo*/-/secrets/:secret":                  s(401,       404,      403,    403,    403,        200,   200,      403,       200,         403, 403),
  "DELETE /repos/:repo*/-/secrets/:secret":               s(401,       404,      403,    403,    403,        204,   204,      403,       204,         403, 403),
  "POST /repos/:repo*/-/secrets/reveal":                  s(401,       401,      401,    401,    401,        401,   401,      401,       401,         401, 401),

  "GET /repos/:repo*/-/branches":                         s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "POST /repos/:repo*/-/branch":                          s(401,       404,      403,    403,    201,        201,   201,      403,       201,         403, 403),
  "GET /repos/:repo*/-/branch/:branch*":                  s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "PATCH /repos/:repo*/-/branch/:branch*":                s(401,       404,      403,    200,    200,        200,   200,      403,       200,         403, 403),
  "DELETE /repos/:repo*/-/branch/:branch*":               s(401,       404,      403,    403,    204,        204,   204,      403,       204,         403, 403),

  "POST /repos/:repo*/-/commit [to a branch]":            s(401,       404,      403,    201,    201,        201,   201,      403,       201,         403, 403),
  "POST /repos/:repo*/-/commit [to main]":                s(401,       404,      403,    403,    201,        201,   201,      403,       201,         403, 403),
  "GET /repos/:repo*/-/commit/:sequence":                 s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/search":                           s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/tree":                             s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/file/:path*/history":              s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/file/:path*":                      s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/diff":                             s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/chain":                            s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/checkpoint":                       s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "POST /repos/:repo*/-/checkpoint/cosignatures":        s(401,       404,      201,    201,    201,        201,   201,      201,       201,         403, 403),
  "GET /repos/:repo*/-/proof/inclusion":                  s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/proof/consistency":                s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/attestations":                     s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),

  "POST /repos/:repo*/-/review":                          s(401,       404,      403,    201,    201,        201,   201,      403,       201,         403, 403),
  "POST /repos/:repo*/-/review [approving own commits]":  s(401,       404,      403,    403,    403,        403,   403,      403,       403,         403, 403),
  "GET /repos/:repo*/-/branch/:branch*/reviews":          s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "POST /repos/:repo*/-/check":                           s(401,       404,      403,    201,    201,        201,   201,      403,       201,         201, 404),
  "GET /repos/:repo*/-/branch/:branch*/checks":           s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "POST /repos/:repo*/-/comment":                         s(401,       404,      403,    201,    201,        201,   201,      403,       201,         403, 403),
  "GET /repos/:repo*/-/branch/:branch*/comments":         s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "DELETE /repos/:repo*/-/comment/:id [another's]":       s(401,       404,      403,    403,    204,        204,   204,      403,       204,         403, 403),
  "DELETE /repos/:repo*/-/comment/:id [own]":             s(401,       404,      403,    204,    204,        204,   204,      403,       204,         403, 403),

  "POST /repos/:repo*/-/proposals":                       s(401,       404,      403,    201,    201,        201,   201,      403,       201,         403, 403),
  "GET /repos/:repo*/-/proposals":                        s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/proposals/:id":                    s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "PATCH /repos/:repo*/-/proposals/:id [another's]":      s(401,       404,      403,    403,    200,        200,   200,      403,       200,         403, 403),
  "PATCH /repos/:repo*/-/proposals/:id [own]":            s(401,       404,      403,    200,    200,        200,   200,      403,       200,         403, 403),
  "POST /repos/:repo*/-/proposals/:id/close [another's]": s(401,       404,      403,    403,    200,        200,   200,      403,       200,         403, 403),
  "POST /repos/:repo*/-/proposals/:id/close [own]":       s(401,       404,      403,    200,    200,        200,   200,      403,       200,         403, 403),

  "POST /repos/:repo*/-/issues":                          s(401,       404,      403,    201,    201,        201,   201,      403,       201,         403, 403),
  "GET /repos/:repo*/-/issues":                           s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/issues/:number":                   s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "PATCH /repos/:repo*/-/issues/:number [another's]":     s(401,       404,      403,    403,    200,        200,   200,      403,       200,         403, 403),
  "PATCH /repos/:repo*/-/issues/:number [own]":           s(401,       404,      403,    200,    200,        200,   200,      403,       200,         403, 403),
  "POST /repos/:repo*/-/issues/:number/close [another's]": s(401,      404,      403,    403,    200,        200,   200,      403,       200,         403, 403),
  "POST /repos/:repo*/-/issues/:number/close [own]":      s(401,       404,      403,    200,    200,        200,   200,      403,       200,         403, 403),
  "POST /repos/:repo*/-/issues/:number/reopen [another's]": s(401,     404,      403,    403,    200,        200,   200,      403,       200,         403, 403),
  "POST /repos/:repo*/-/issues/:number/reopen [own]":     s(401,       404,      403,    200,    200,        200,   200,      403,       200,         403, 403),
  "GET /repos/:repo*/-/issues/:number/comments":          s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "POST /repos/:repo*/-/issues/:number/comments":         s(401,       404,      403,    201,    201,        201,   201,      403,       201,         403, 403),
  "PATCH /repos/:repo*/-/issues/:number/comments/:comment [another's]": s(401, 404, 403,  403,    403,        403,   403,      403,       403,         403, 403),
  "PATCH /repos/:repo*/-/issues/:number/comments/:comment [own]": s(401, 404,      403,    200,    200,        200,   200,      403,       200,         403, 403),
  "DELETE /repos/:repo*/-/issues/:number/comments/:comment [another's]": s(401, 404, 403, 403,    204,        204,   204,      403,       204,         403, 403),
  "DELETE /repos/:repo*/-/issues/:number/comments/:comment [own]": s(401, 404,     403,    204,    204,        204,   204,      403,       204,         403, 403),
  "GET /repos/:repo*/-/commit/:sequence/issues":          s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/proposals/:id/issues":             s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/issues/:number/refs":              s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "POST /repos/:repo*/-/issues/:number/refs":             s(401,       404,      403,    201,    201,        201,   201,      403,       201,         403, 403),

  "POST /repos/:repo*/-/releases":                        s(401,       404,      403,    403,    201,        201,   201,      403,       201,         403, 403),
  "GET /repos/:repo*/-/releases":                         s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/releases/:release_name":           s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "DELETE /repos/:repo*/-/releases/:release_name":        s(401,       404,      403,    403,    403,        204,   204,      403,       204,         403, 403),

  "POST /repos/:repo*/-/merge":                           s(401,       404,      403,    403,    200,        200,   200,      403,       200,         403, 403),
  "POST /repos/:repo*/-/rebase":                          s(401,       404,      403,    403,    200,        200,   200,      403,       200,         403, 403),
  "GET /repos/:repo*/-/branch/:branch*/status":           s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "POST /repos/:repo*/-/branch/:branch*/auto-merge":     s(401,       404,      403,    204,    204,        204,   204,      403,       204,         403, 403),
  "DELETE /repos/:repo*/-/branch/:branch*/auto-merge":   s(401,       404,      403,    204,    204,        204,   204,      403,       204,         403, 403),
  "POST /repos/:repo*/-/purge":                           s(401,       404,      403,    403,    403,        200,   200,      403,       200,         403, 403),

  "GET /repos/:repo*/-/archive [ordinary]":               s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /repos/:repo*/-/archive [presigned]":              s(200,       200,      200,    200,    200,        200,   200,      200,       200,         200, 200),
  "GET /repos/:repo*/-/archive [forged signature]":       s(403,       403,      403,    403,    403,        403,   403,      403,       403,         403, 403),

  "GET /repos/:repo*/-/events":                           s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /events":                                          s(401,       403,      403,    403,    403,        403,   403,      403,       200,         403, 403),

  "POST /subscriptions [repo]":                           s(401,       404,      201,    201,    201,        201,   201,      201,       201,         403, 403),
  "POST /subscriptions [global]":                         s(401,       403,      403,    403,    403,        403,   403,      403,       201,         403, 403),
  "GET /subscriptions":                                   s(401,       200,      200,    200,    200,        200,   200,      200,       200,         403, 403),
  "DELETE /subscriptions/:id [another's]":                s(401,       404,      404,    404,    404,        404,   404,      404,       204,         403, 403),
  "DELETE /subscriptions/:id [own]":                      s(401,       204,      204,    204,    204,        204,   204,      204,       204,         403, 403),
  "POST /subscriptions/:id/resume [another's]":           s(401,       404,      404,    404,    404,        404,   404,      404,       204,         403, 403),
  "POST /subscriptions/:id/resume [own]":                 s(401,       204,      204,    204,    204,        204,   204,      204,       204,         403, 403),

  "POST /repos/:repo*/-/ci/run":                          s(401,       404,      403,    201,    201,        201,   201,      403,       201,         403, 403),
  "POST /repos/:repo*/-/archive/presign":                 s(401,       401,      401,    401,    401,        401,   401,      401,       401,         401, 401),
  "POST /repos/:repo*/-/check/:check*/logs":              s(401,       401,      401,    401,    401,        401,   401,      401,       401,         401, 401),
  "POST /ci/token":                                       s(401,       401,      401,    401,    401,        401,   401,      401,       401,         401, 401),
  "POST /webhook [signed]":                               s(200,       200,      200,    200,    200,        200,   200,      200,       200,         200, 200),
  "POST /webhook [unsigned]":                             s(401,       401,      401,    401,    401,        401,   401,      401,       401,         401, 401),
  "POST /claim":                                          s(401,       401,      401,    401,    401,        401,   401,      401,       401,         401, 401),
  "POST /jobs/:id/heartbeat":                             s(401,       401,      401,    401,    401,        401,   401,      401,       401,         401, 401),
  "POST /jobs/:id/complete":                              s(401,       401,      401,    401,    401,        401,   401,      401,       401,         401, 401),
  "GET /run/:id":                                         s(401,       404,      200,    200,    200,        200,   200,      200,       200,         403, 403),
  "GET /run/:id/logs/:check* [ordinary]":                 s(401,       404,      302,    302,    302,        302,   302,      302,       302,         403, 403),
  "GET /run/:id/logs/:check* [signed]":                   s(200,       200,      200,    200,    200,        200,   200,      200,       200,         200, 200),

  "POST /repos":                                          s(401,       404,      403,    403,    403,        403,   201,      403,       201,         403, 403),
  "GET /repos":                                           s(401,       200,      200,    200,    200,        200,   200,      200,       200,         403, 403),
  "GET /repos/:repo*":                                    s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "DELETE /repos/:repo*":                                 s(401,       404,      403,    403,    403,        403,   204,      403,       204,         403, 403),

  "GET /":                                                s(302,       302,      302,    302,    302,        302,   302,      302,       302,         302, 302),
  "GET /ui":                                              s(401,       200,      200,    200,    200,        200,   200,      200,       200,         403, 403),
  "GET /ui/orgs/:org":                                    s(401,       404,      200,    200,    200,        200,   200,      200,       200,         403, 403),
  "POST /ui/orgs":                                        s(401,       303,      303,    303,    303,        303,   303,      303,       303,         403, 403),
  "POST /ui/orgs/:org/repos":                             s(401,       404,      403,    403,    403,        403,   303,      403,       303,         403, 403),
  "GET /ui/static/:hash/:name":                           s(200,       200,      200,    200,    200,        200,   200,      200,       200,         200, 200),
  // Development mode only (DEV_IDENTITIES): no such page on this server, whoever asks.
  "POST /ui/dev/identity":                                s(404,       404,      404,    404,    404,        404,   404,      404,       404,         404, 404),
  "GET /ui/repos/:repo*":                                 s(401,       404,      302,    302,    302,        302,   302,      302,       302,         302, 404),
  "GET /ui/repos/:repo*/-/tree":                          s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/tree/:path*":                   s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/compare":                       s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/file/:path*":                   s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/raw/:path*":                    s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/plain/:path*":                  s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/history":                       s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/commit/:sequence":              s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/branches":                      s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "POST /ui/repos/:repo*/-/branches":                     s(401,       404,      403,    403,    303,        303,   303,      403,       303,         403, 403),
  "GET /ui/repos/:repo*/-/edit":                          s(401,       404,      403,    200,    200,        200,   200,      403,       200,         403, 403),
  "POST /ui/repos/:repo*/-/commit [to a branch]":         s(401,       404,      403,    303,    303,        303,   303,      403,       303,         403, 403),
  "POST /ui/repos/:repo*/-/commit [to main]":             s(401,       404,      403,    403,    303,        303,   303,      403,       303,         403, 403),
  "GET /ui/repos/:repo*/-/branch/:branch*":               s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "POST /ui/repos/:repo*/-/branch/:branch*/review":       s(401,       404,      403,    303,    303,        303,   303,      403,       303,         403, 403),
  "POST /ui/repos/:repo*/-/branch/:branch*/merge":        s(401,       404,      403,    403,    303,        303,   303,      403,       303,         403, 403),
  "POST /ui/repos/:repo*/-/branch/:branch*/auto-merge":   s(401,       404,      403,    303,    303,        303,   303,      403,       303,         403, 403),
  "GET /ui/repos/:repo*/-/proposals":                     s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "POST /ui/repos/:repo*/-/proposals":                    s(401,       404,      403,    303,    303,        303,   303,      403,       303,         403, 403),
  "POST /ui/repos/:repo*/-/proposals/:id/edit [another's]": s(401,     404,      403,    403,    303,        303,   303,      403,       303,         403, 403),
  "POST /ui/repos/:repo*/-/proposals/:id/edit [own]":     s(401,       404,      403,    303,    303,        303,   303,      403,       303,         403, 403),
  "POST /ui/repos/:repo*/-/proposals/:id/close [another's]": s(401,    404,      403,    403,    303,        303,   303,      403,       303,         403, 403),
  "POST /ui/repos/:repo*/-/proposals/:id/close [own]":    s(401,       404,      403,    303,    303,        303,   303,      403,       303,         403, 403),
  "GET /ui/repos/:repo*/-/issues":                        s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "POST /ui/repos/:repo*/-/issues":                       s(401,       404,      403,    303,    303,        303,   303,      403,       303,         403, 403),
  "GET /ui/repos/:repo*/-/issues/:number":                s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "POST /ui/repos/:repo*/-/issues/:number/comments":      s(401,       404,      403,    303,    303,        303,   303,      403,       303,         403, 403),
  "POST /ui/repos/:repo*/-/issues/:number/close [another's]": s(401,   404,      403,    403,    303,        303,   303,      403,       303,         403, 403),
  "POST /ui/repos/:repo*/-/issues/:number/close [own]":   s(401,       404,      403,    303,    303,        303,   303,      403,       303,         403, 403),
  "POST /ui/repos/:repo*/-/issues/:number/reopen [another's]": s(401,  404,      403,    403,    303,        303,   303,      403,       303,         403, 403),
  "POST /ui/repos/:repo*/-/issues/:number/reopen [own]":  s(401,       404,      403,    303,    303,        303,   303,      403,       303,         403, 403),
  "GET /ui/repos/:repo*/-/proposals/:ref [number]":       s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/proposals/:ref [uuid]":         s(401,       404,      302,    302,    302,        302,   302,      302,       302,         302, 404),
  "POST /ui/repos/:repo*/-/branch/:branch*/comment":      s(401,       404,      403,    303,    303,        303,   303,      403,       303,         403, 403),
  "GET /ui/repos/:repo*/-/archive":                       s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/releases":                      s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/members":                       s(401,       404,      403,    403,    403,        200,   200,      403,       200,         403, 403),
  "GET /ui/repos/:repo*/-/search":                        s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/find":                          s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/ci":                            s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "POST /ui/repos/:repo*/-/ci":                           s(401,       404,      403,    303,    303,        303,   303,      403,       303,         403, 403),
  "GET /ui/repos/:repo*/-/ci/:run":                       s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/ci/:run/log/:check*":           s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/ci/:run/raw/:check*":           s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/ci/:run/tail/:check*":          s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  "GET /ui/repos/:repo*/-/ci/checks/:check*":             s(401,       404,      200,    200,    200,        200,   200,      200,       200,         200, 404),
  // Repo admins reach the org's forms, whose operations need an org owner (or a global admin).
  "POST /ui/repos/:repo*/-/members/roles":                s(401,       404,      403,    403,    403,        303,   303,      403,       303,         403, 403),
  "POST /ui/repos/:repo*/-/members/org":                  s(401,       404,      403,    403,    403,        403,   303,      403,       303,         403, 403),
  "POST /ui/repos/:repo*/-/members/invites":              s(401,       404,      403,    403,    403,        403,   303,      403,       303,         403, 403),
  "POST /ui/invites/:id/accept [to another]":             s(401,       404,      404,    404,    404,        404,   404,      404,       404,         403, 403),
  "POST /ui/invites/:id/accept [to caller]":              s(401,       303,      303,    303,    303,        303,   303,      303,       303,         403, 403),
  "GET /ui/repos/:repo*/-/secrets":                       s(401,       404,      403,    403,    403,        200,   200,      403,       200,         403, 403),
  "POST /ui/repos/:repo*/-/secrets":                      s(401,       404,      403,    403,    403,        303,   303,      403,       303,         403, 403),
  "POST /ui/repos/:repo*/-/secrets/:secret/delete":       s(401,       404,      403,    403,    403,        303,   303,      403,       303,         403, 403),
};

/** How one row's request is built, and which codes its 404 and 403 answers carry. */
interface Request {
  /** Runs before the cell's request: creates what the cell needs (fresh when the request mutates). */
  build: (w: World, p: Persona) => Promise<Call>;
  notFound: ErrorCode;
  /** FORBIDDEN unless given; a function when the code depends on the caller. */
  forbidden?: ErrorCode | ((p: Persona) => ErrorCode);
  /** An SSE route: its 200 is a `text/event-stream`, never read. */
  stream?: true;
  /** The code of a 400 the row expects. */
  badRequest?: ErrorCode;
}

const repoRoute = (build: Request["build"]): Request => ({ build, notFound: "REPO_NOT_FOUND" });
/** A route that answers no 404 of its own (no org or repo in its path or body). */
const plainRoute = (build: Request["build"]): Request => ({ build, notFound: "NOT_FOUND" });
const orgRoute = (build: Request["build"]): Request => ({ build, notFound: "ORG_NOT_FOUND" });
const commitTo = (branch: string, path: string) => ({
  branch,
  message: "authz",
  files: [{ path, content: b64("x") }],
});

/** The personas who may write to the fixture repo (writer or higher, directly or through the org or globally). */
const writers: readonly Persona[] = ["writer", "maintainer", "admin", "orgOwner", "globalAdmin"];
/**
 * Who authors the object of an `[own]` cell: the caller when it can write, otherwise (it could not
 * have authored one) the colleague, so those cells still show the route's refusal.
 */
const authorFor = (w: World, p: Persona): string =>
  writers.includes(p) ? identities[p as SignedIn] : w.colleague;

/** A route of `/subscriptions/{id}`: an id the caller may not act on answers SUBSCRIPTION_NOT_FOUND. */
const subscriptionRoute = (build: Request["build"]): Request => ({
  build,
  notFound: "SUBSCRIPTION_NOT_FOUND",
});

/**
 * A new subscription of the caller's own for an `[own]` cell. Every signed-in persona but the
 * stranger reads the fixture repo and subscribes itself; the stranger's was made while it was a
 * reader, its role removed since (the rule is "its creator", whatever the creator may read now).
 * Anonymous and the jobs get the colleague's. `suspended` for the resume cells, so a resume has work to do.
 */
function ownSubscription(w: World, p: Persona, opts: { suspended?: boolean } = {}): Promise<string> {
  if (p === "anonymous") return w.freshSubscription(w.colleague, opts);
  if (p === "stranger") return w.freshSubscriptionOfFormerReader(identities.stranger, opts);
  if (isJobPersona(p)) return w.freshSubscription(w.colleague, opts); // a job cannot subscribe
  return w.freshSubscription(identities[p], opts);
}

/** A path with a genuine presigned archive query for `main` at the fixture sequence of the fixture repo. */
const presignedArchive = (w: World) =>
  presignArchiveUrl(w.app.server.ctx, { repo: w.repo, branch: "main", sequence: w.sequence, baseUrl: "" });

const requests: Record<string, Request> = {
  "GET /healthz": plainRoute(async () => ({ method: "GET", path: "/healthz" })),
  "GET /openapi.json": plainRoute(async () => ({ method: "GET", path: "/openapi.json" })),
  "GET /.well-known/openid-configuration": plainRoute(async () => ({
    method: "GET",
    path: "/.well-known/openid-configuration",
  })),
  "GET /.well-known/jwks.json": plainRoute(async () => ({ method: "GET", path: "/.well-known/jwks.json" })),
  "GET /.well-known/quire-log-key": plainRoute(async () => ({
    method: "GET",
    path: "/.well-known/quire-log-key",
  })),
  "GET /auth/cli": plainRoute(async () => ({ method: "GET", path: "/auth/cli" })),
  "GET /auth/login": plainRoute(async () => ({ method: "GET", path: "/auth/login?return_to=%2Forgs" })),
  "GET /auth/callback": {
    build: async () => ({ method: "GET", path: "/auth/callback?code=c&state=s" }),
    notFound: "NOT_FOUND",
    badRequest: "VALIDATION_FAILED",
  },
  "GET /auth/logout": plainRoute(async () => ({ method: "GET", path: "/auth/logout" })),
  "POST /auth/logout": plainRoute(async () => ({ method: "POST", path: "/auth/logout" })),

  "POST /orgs": plainRoute(async (w) => ({ method: "POST", path: "/orgs", body: { name: w.unique("new") } })),
  "GET /me": plainRoute(async () => ({ method: "GET", path: "/me" })),
  "GET /orgs": plainRoute(async () => ({ method: "GET", path: "/orgs" })),
  "GET /orgs/:org": orgRoute(async (w) => ({ method: "GET", path: `/orgs/${w.org}` })),
  // An org is visible to repo-role holders only through a repo, and an org with repos cannot be
  // deleted (409), so those cells get an org with a repo (expect 403 before any 409); the others
  // get an empty org, which the owner and the global admin delete.
  "DELETE /orgs/:org": orgRoute(async (w, p) => ({
    method: "DELETE",
    path: `/orgs/${await w.freshOrg({ withRepo: isRepoRolePersona(p) })}`,
  })),
  "GET /orgs/:org/repos": orgRoute(async (w) => ({ method: "GET", path: `/orgs/${w.org}/repos` })),
  "GET /orgs/:org/members": orgRoute(async (w) => ({ method: "GET", path: `/orgs/${w.org}/members` })),
  "POST /orgs/:org/members/:identity": orgRoute(async (w) => ({
    method: "POST",
    path: `/orgs/${w.org}/members/${w.unique("new")}@authz.test`,
    body: { role: "member" },
  })),
  "DELETE /orgs/:org/members/:identity": orgRoute(async (w) => ({
    method: "DELETE",
    path: `/orgs/${w.org}/members/${await w.freshMember(w.org)}`,
  })),
  "GET /orgs/:org/invites": orgRoute(async (w) => ({ method: "GET", path: `/orgs/${w.org}/invites` })),
  "POST /orgs/:org/invites": orgRoute(async (w) => ({
    method: "POST",
    path: `/orgs/${w.org}/invites`,
    body: { email: `${w.unique("invited")}@authz.test`, role: "member" },
  })),
  "POST /orgs/:org/invites/:token/accept [to another]": {
    build: async (w) => {
      const { token } = await w.freshInvite(w.org, `${w.unique("invited")}@authz.test`);
      return { method: "POST", path: `/orgs/${w.org}/invites/${token}/accept` };
    },
    notFound: "INVITE_NOT_FOUND",
    // A job token is refused before the invitation is looked at.
    forbidden: (p) => (isJobPersona(p) ? "FORBIDDEN" : "INVITE_EMAIL_MISMATCH"),
  },
  // Accepting changes the caller's membership, so each cell gets its own org.
  "POST /orgs/:org/invites/:token/accept [to caller]": {
    build: async (w, p) => {
      const org = await w.freshOrg({ withRepo: false });
      const email =
        p === "anonymous" || isJobPersona(p) ? `${w.unique("invited")}@authz.test` : identities[p];
      const { token } = await w.freshInvite(org, email);
      return { method: "POST", path: `/orgs/${org}/invites/${token}/accept` };
    },
    notFound: "INVITE_NOT_FOUND",
  },
  "DELETE /orgs/:org/invites/:id": orgRoute(async (w) => {
    const { id } = await w.freshInvite(w.org, `${w.unique("invited")}@authz.test`);
    return { method: "DELETE", path: `/orgs/${w.org}/invites/${id}` };
  }),

  "GET /repos/:repo*/-/roles": repoRoute(async (w) => ({ method: "GET", path: `/repos/${w.repo}/-/roles` })),
  "PUT /repos/:repo*/-/roles/:identity": repoRoute(async (w) => ({
    method: "PUT",
    path: `/repos/${w.repo}/-/roles/${w.unique("new")}@authz.test`,
    body: { role: "reader" },
  })),
  "DELETE /repos/:repo*/-/roles/:identity": repoRoute(async (w) => ({
    method: "DELETE",
    path: `/repos/${w.repo}/-/roles/${await w.freshGrant(w.repo)}`,
  })),
  "GET /repos/:repo*/-/secrets": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/secrets`,
  })),
  "PUT /repos/:repo*/-/secrets/:secret": repoRoute(async (w) => ({
    method: "PUT",
    path: `/repos/${w.repo}/-/secrets/${w.unique("NEW").replace("-", "_")}`,
    body: { value: "authz-value" },
  })),
  "DELETE /repos/:repo*/-/secrets/:secret": repoRoute(async (w) => ({
    method: "DELETE",
    path: `/repos/${w.repo}/-/secrets/${await w.freshSecret(w.repo)}`,
  })),
  "POST /repos/:repo*/-/secrets/reveal": plainRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/secrets/reveal`,
    body: { check_name: "authz/check", names: ["AUTHZ"] },
  })),

  "GET /repos/:repo*/-/branches": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/branches`,
  })),
  "POST /repos/:repo*/-/branch": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/branch`,
    body: { name: w.unique("new") },
  })),
  "GET /repos/:repo*/-/branch/:branch*": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/branch/${w.branch}`,
  })),
  "PATCH /repos/:repo*/-/branch/:branch*": repoRoute(async (w) => ({
    method: "PATCH",
    path: `/repos/${w.repo}/-/branch/${await w.freshBranch(w.repo, { draft: true })}`,
    body: { draft: false },
  })),
  "DELETE /repos/:repo*/-/branch/:branch*": repoRoute(async (w) => ({
    method: "DELETE",
    path: `/repos/${w.repo}/-/branch/${await w.freshBranch(w.repo)}`,
  })),

  "POST /repos/:repo*/-/commit [to a branch]": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/commit`,
    body: commitTo(await w.freshBranch(w.repo), "authz.md"),
  })),
  "POST /repos/:repo*/-/commit [to main]": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${await w.freshRepo()}/-/commit`,
    body: commitTo("main", "authz.md"),
  })),
  "GET /repos/:repo*/-/commit/:sequence": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/commit/${w.sequence}`,
  })),
  "GET /repos/:repo*/-/tree": repoRoute(async (w) => ({ method: "GET", path: `/repos/${w.repo}/-/tree` })),
  "GET /repos/:repo*/-/search": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/search?q=hello`,
  })),
  "GET /repos/:repo*/-/file/:path*/history": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/file/${w.file}/history`,
  })),
  "GET /repos/:repo*/-/file/:path*": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/file/${w.file}`,
  })),
  "GET /repos/:repo*/-/diff": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/diff?branch=${w.branch}`,
  })),
  "GET /repos/:repo*/-/chain": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/chain?from=1&to=${w.sequence}`,
  })),
  "GET /repos/:repo*/-/checkpoint": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/checkpoint`,
  })),
  // A witness's cosignature of the repo's current checkpoint: any signed-in reader may post one.
  "POST /repos/:repo*/-/checkpoint/cosignatures": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/checkpoint/cosignatures`,
    body: cosignatureBody(
      (await w.app.as(identities.globalAdmin).get(`/repos/${w.repo}/-/checkpoint`)).body as string,
    ),
  })),
  "GET /repos/:repo*/-/proof/inclusion": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/proof/inclusion?sequence=1&size=${w.sequence}`,
  })),
  "GET /repos/:repo*/-/proof/consistency": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/proof/consistency?from=1&to=${w.sequence}`,
  })),
  "GET /repos/:repo*/-/attestations": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/attestations?branch=${w.branch}`,
  })),

  // Approving: the branch's only commit is the colleague's, so no persona is refused for
  // self-approval (docs/reviews.md); the access rule alone decides.
  "POST /repos/:repo*/-/review": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/review`,
    body: { branch: await w.freshBranchWithCommit(), status: "approved", body: "authz" },
  })),
  // Approving a branch one has committed to is refused whatever the role (SELF_APPROVAL); the
  // personas who cannot commit get the colleague's branch and are refused by their role.
  "POST /repos/:repo*/-/review [approving own commits]": {
    build: async (w, p) => ({
      method: "POST",
      path: `/repos/${w.repo}/-/review`,
      body: { branch: await w.freshBranchWithCommit(authorFor(w, p)), status: "approved", body: "authz" },
    }),
    notFound: "REPO_NOT_FOUND",
    forbidden: (p) => (writers.includes(p) ? "SELF_APPROVAL" : "FORBIDDEN"),
  },
  "GET /repos/:repo*/-/branch/:branch*/reviews": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/branch/${w.branch}/reviews`,
  })),
  // A check name of its own per cell, so no report replaces another cell's.
  "POST /repos/:repo*/-/check": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/check`,
    body: { branch: w.branch, check_name: `authz/${w.unique("check")}`, status: "passed" },
  })),
  "GET /repos/:repo*/-/branch/:branch*/checks": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/branch/${w.branch}/checks`,
  })),
  "POST /repos/:repo*/-/comment": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/comment`,
    body: { branch: w.branch, path: w.file, body: "authz" },
  })),
  "GET /repos/:repo*/-/branch/:branch*/comments": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/branch/${w.branch}/comments`,
  })),
  "DELETE /repos/:repo*/-/comment/:id [another's]": repoRoute(async (w) => ({
    method: "DELETE",
    path: `/repos/${w.repo}/-/comment/${await w.freshComment(w.colleague)}`,
  })),
  // The caller's own comment where it can write one; the others get the colleague's.
  "DELETE /repos/:repo*/-/comment/:id [own]": repoRoute(async (w, p) => ({
    method: "DELETE",
    path: `/repos/${w.repo}/-/comment/${await w.freshComment(authorFor(w, p))}`,
  })),

  // One open proposal per branch, so each cell opens on a new branch.
  "POST /repos/:repo*/-/proposals": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/proposals`,
    body: { branch: await w.freshBranch(w.repo), title: "authz" },
  })),
  "GET /repos/:repo*/-/proposals": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/proposals`,
  })),
  "GET /repos/:repo*/-/proposals/:id": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/proposals/${w.proposal}`,
  })),
  "PATCH /repos/:repo*/-/proposals/:id [another's]": repoRoute(async (w) => ({
    method: "PATCH",
    path: `/repos/${w.repo}/-/proposals/${await w.freshProposal(w.colleague)}`,
    body: { title: "patched" },
  })),
  "PATCH /repos/:repo*/-/proposals/:id [own]": repoRoute(async (w, p) => ({
    method: "PATCH",
    path: `/repos/${w.repo}/-/proposals/${await w.freshProposal(authorFor(w, p))}`,
    body: { title: "patched" },
  })),
  "POST /repos/:repo*/-/proposals/:id/close [another's]": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/proposals/${await w.freshProposal(w.colleague)}/close`,
  })),
  "POST /repos/:repo*/-/proposals/:id/close [own]": repoRoute(async (w, p) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/proposals/${await w.freshProposal(authorFor(w, p))}/close`,
  })),

  "POST /repos/:repo*/-/issues": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/issues`,
    body: { title: "authz" },
  })),
  "GET /repos/:repo*/-/issues": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/issues`,
  })),
  "GET /repos/:repo*/-/issues/:number": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/issues/${await w.freshIssue(w.colleague)}`,
  })),
  "PATCH /repos/:repo*/-/issues/:number [another's]": repoRoute(async (w) => ({
    method: "PATCH",
    path: `/repos/${w.repo}/-/issues/${await w.freshIssue(w.colleague)}`,
    body: { title: "patched" },
  })),
  "PATCH /repos/:repo*/-/issues/:number [own]": repoRoute(async (w, p) => ({
    method: "PATCH",
    path: `/repos/${w.repo}/-/issues/${await w.freshIssue(authorFor(w, p))}`,
    body: { title: "patched" },
  })),
  "POST /repos/:repo*/-/issues/:number/close [another's]": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/issues/${await w.freshIssue(w.colleague)}/close`,
  })),
  "POST /repos/:repo*/-/issues/:number/close [own]": repoRoute(async (w, p) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/issues/${await w.freshIssue(authorFor(w, p))}/close`,
  })),
  "POST /repos/:repo*/-/issues/:number/reopen [another's]": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/issues/${await w.freshIssue(w.colleague, { closed: true })}/reopen`,
  })),
  "POST /repos/:repo*/-/issues/:number/reopen [own]": repoRoute(async (w, p) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/issues/${await w.freshIssue(authorFor(w, p), { closed: true })}/reopen`,
  })),
  "GET /repos/:repo*/-/issues/:number/comments": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/issues/${await w.freshIssue(w.colleague)}/comments`,
  })),
  "POST /repos/:repo*/-/issues/:number/comments": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/issues/${await w.freshIssue(w.colleague)}/comments`,
    body: { body: "authz" },
  })),
  "PATCH /repos/:repo*/-/issues/:number/comments/:comment [another's]": repoRoute(async (w) => ({
    method: "PATCH",
    path: await w.freshIssueComment(w.colleague),
    body: { body: "edited" },
  })),
  "PATCH /repos/:repo*/-/issues/:number/comments/:comment [own]": repoRoute(async (w, p) => ({
    method: "PATCH",
    path: await w.freshIssueComment(authorFor(w, p)),
    body: { body: "edited" },
  })),
  "DELETE /repos/:repo*/-/issues/:number/comments/:comment [another's]": repoRoute(async (w) => ({
    method: "DELETE",
    path: await w.freshIssueComment(w.colleague),
  })),
  "DELETE /repos/:repo*/-/issues/:number/comments/:comment [own]": repoRoute(async (w, p) => ({
    method: "DELETE",
    path: await w.freshIssueComment(authorFor(w, p)),
  })),
  "GET /repos/:repo*/-/commit/:sequence/issues": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/commit/${w.sequence}/issues`,
  })),
  "GET /repos/:repo*/-/proposals/:id/issues": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/proposals/${w.proposal}/issues`,
  })),
  "GET /repos/:repo*/-/issues/:number/refs": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/issues/${await w.freshIssue(w.colleague)}/refs`,
  })),
  "POST /repos/:repo*/-/issues/:number/refs": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/issues/${await w.freshIssue(w.colleague)}/refs`,
    body: { ref_type: "commit", ref_id: String(w.sequence) },
  })),

  "POST /repos/:repo*/-/releases": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/releases`,
    body: { name: w.unique("rel"), sequence: w.sequence },
  })),
  "GET /repos/:repo*/-/releases": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/releases`,
  })),
  "GET /repos/:repo*/-/releases/:release_name": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/releases/${w.release}`,
  })),
  "DELETE /repos/:repo*/-/releases/:release_name": repoRoute(async (w) => ({
    method: "DELETE",
    path: `/repos/${w.repo}/-/releases/${await w.freshRelease()}`,
  })),

  // An active, non-draft branch whose one commit touches a path of its own (no conflicts); the
  // fixture repo has no policy files, so nothing but the role decides.
  "POST /repos/:repo*/-/merge": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/merge`,
    body: { branch: await w.freshBranchWithCommit() },
  })),
  "POST /repos/:repo*/-/rebase": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/rebase`,
    body: { branch: await w.freshBranchWithCommit() },
  })),
  "GET /repos/:repo*/-/branch/:branch*/status": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/branch/${w.branch}/status`,
  })),
  "POST /repos/:repo*/-/branch/:branch*/auto-merge": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/branch/${await w.freshBranchWithCommit()}/auto-merge`,
  })),
  "DELETE /repos/:repo*/-/branch/:branch*/auto-merge": repoRoute(async (w) => ({
    method: "DELETE",
    path: `/repos/${w.repo}/-/branch/${await w.freshBranchWithCommit()}/auto-merge`,
  })),
  // Nothing in the fixture repo was closed a day ago, so a real purge removes nothing.
  "POST /repos/:repo*/-/purge": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/purge`,
    body: { older_than: "1d" },
  })),

  // The route is public in its table: the ordinary form authenticates itself (reader or higher),
  // the presigned form ignores any credentials and is decided by its signature alone. The body is
  // a gzip stream (read as text here); only the status and error code are checked.
  "GET /repos/:repo*/-/archive [ordinary]": repoRoute(async (w) => ({
    method: "GET",
    path: `/repos/${w.repo}/-/archive?branch=main&at=${w.sequence}`,
  })),
  "GET /repos/:repo*/-/archive [presigned]": repoRoute(async (w) => ({
    method: "GET",
    path: await presignedArchive(w),
  })),
  "GET /repos/:repo*/-/archive [forged signature]": {
    build: async (w) => ({
      method: "GET",
      path: (await presignedArchive(w)).replace(/sig=[0-9a-f]+/, `sig=${"0".repeat(64)}`),
    }),
    notFound: "REPO_NOT_FOUND",
    forbidden: "SIGNATURE_INVALID",
  },

  // Event streams (docs/events.md): a repo the caller may not read is 404 as if absent; the global
  // stream is for global admins only, 403 for any other signed-in identity.
  "GET /repos/:repo*/-/events": {
    build: async (w) => ({ method: "GET", path: `/repos/${w.repo}/-/events` }),
    notFound: "REPO_NOT_FOUND",
    stream: true,
  },
  "GET /events": {
    build: async () => ({ method: "GET", path: "/events" }),
    notFound: "NOT_FOUND",
    stream: true,
  },

  // Subscriptions (docs/events.md, "Webhooks"): with a repo, reader or higher on it (404 when the
  // caller may not read it); without, a global admin (403). Delete and resume: its creator or a
  // global admin; anyone else gets 404 SUBSCRIPTION_NOT_FOUND, as for an id that does not exist.
  // `[another's]` is the colleague's (none of the personas), `[own]` the caller's.
  "POST /subscriptions [repo]": repoRoute(async (w) => ({
    method: "POST",
    path: "/subscriptions",
    body: w.subscriptionBody(),
  })),
  "POST /subscriptions [global]": plainRoute(async (w) => ({
    method: "POST",
    path: "/subscriptions",
    body: w.subscriptionBody({ global: true }),
  })),
  "GET /subscriptions": plainRoute(async () => ({ method: "GET", path: "/subscriptions" })),
  "DELETE /subscriptions/:id [another's]": subscriptionRoute(async (w) => ({
    method: "DELETE",
    path: `/subscriptions/${await w.freshSubscription(w.colleague)}`,
  })),
  "DELETE /subscriptions/:id [own]": subscriptionRoute(async (w, p) => ({
    method: "DELETE",
    path: `/subscriptions/${await ownSubscription(w, p)}`,
  })),
  "POST /subscriptions/:id/resume [another's]": subscriptionRoute(async (w) => ({
    method: "POST",
    path: `/subscriptions/${await w.freshSubscription(w.colleague, { suspended: true })}/resume`,
  })),
  "POST /subscriptions/:id/resume [own]": subscriptionRoute(async (w, p) => ({
    method: "POST",
    path: `/subscriptions/${await ownSubscription(w, p, { suspended: true })}/resume`,
  })),

  // The body names the org; an org the caller cannot see answers ORG_NOT_FOUND.
  "POST /repos/:repo*/-/ci/run": repoRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/ci/run`,
    body: { branch: w.ciBranch },
  })),
  // The request-token and worker routes take neither ID tokens nor job tokens: every persona is 401.
  "POST /repos/:repo*/-/archive/presign": plainRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/archive/presign`,
  })),
  "POST /repos/:repo*/-/check/:check*/logs": plainRoute(async (w) => ({
    method: "POST",
    path: `/repos/${w.repo}/-/check/${w.loggedCheck}/logs`,
    body: "a log",
  })),
  "POST /ci/token": plainRoute(async () => ({
    method: "POST",
    path: "/ci/token",
    body: { audience: "quire" },
  })),
  // The scheduler's intake ignores who calls: only the delivery's signature counts.
  "POST /webhook [signed]": plainRoute(async (w) => {
    const body = { id: w.unique("event"), type: "com.svc.authz.probe", data: {} };
    return { method: "POST", path: "/webhook", body, headers: await w.webhookSignature(body) };
  }),
  "POST /webhook [unsigned]": plainRoute(async (w) => ({
    method: "POST",
    path: "/webhook",
    body: { id: w.unique("event"), type: "com.svc.authz.probe", data: {} },
  })),
  "POST /claim": plainRoute(async () => ({ method: "POST", path: "/claim" })),
  "POST /jobs/:id/heartbeat": plainRoute(async (w) => ({
    method: "POST",
    path: `/jobs/${w.jobs.job.id}/heartbeat`,
  })),
  "POST /jobs/:id/complete": plainRoute(async (w) => ({
    method: "POST",
    path: `/jobs/${w.jobs.job.id}/complete`,
    body: { status: "passed" },
  })),
  "GET /run/:id": {
    build: async (w) => ({ method: "GET", path: `/run/${w.jobs.job.id}` }),
    notFound: "JOB_NOT_FOUND",
  },
  "GET /run/:id/logs/:check* [ordinary]": {
    build: async (w) => ({ method: "GET", path: `/run/${w.jobs.job.id}/logs/${w.loggedCheck}` }),
    notFound: "JOB_NOT_FOUND",
  },
  "GET /run/:id/logs/:check* [signed]": plainRoute(async (w) => {
    const url = new URL(await signedLogUrl(w.app.server.ctx, w.jobs.job.id, w.loggedCheck));
    return { method: "GET", path: url.pathname + url.search };
  }),

  "POST /repos": orgRoute(async (w) => ({
    method: "POST",
    path: "/repos",
    body: { owner: w.org, name: `${w.org}/${w.unique("new")}` },
  })),
  "GET /repos": plainRoute(async () => ({ method: "GET", path: "/repos" })),
  "GET /repos/:repo*": repoRoute(async (w) => ({ method: "GET", path: `/repos/${w.repo}` })),
  "DELETE /repos/:repo*": repoRoute(async (w) => ({
    method: "DELETE",
    path: `/repos/${await w.freshRepo()}`,
  })),

  "GET /": plainRoute(async () => ({ method: "GET", path: "/" })),
  "GET /ui": plainRoute(async () => ({ method: "GET", path: "/ui/" })),
  "GET /ui/orgs/:org": orgRoute(async (w) => ({ method: "GET", path: `/ui/orgs/${w.org}` })),
  "POST /ui/orgs": plainRoute(async (w) => ({
    method: "POST",
    path: "/ui/orgs",
    form: { name: w.unique("new") },
  })),
  "POST /ui/orgs/:org/repos": orgRoute(async (w) => ({
    method: "POST",
    path: `/ui/orgs/${w.org}/repos`,
    form: { name: w.unique("new") },
  })),
  "GET /ui/static/:hash/:name": plainRoute(async () => ({ method: "GET", path: styles.path })),
  "POST /ui/dev/identity": plainRoute(async () => ({ method: "POST", path: "/ui/dev/identity" })),
  "GET /ui/repos/:repo*": repoRoute(async (w) => ({ method: "GET", path: `/ui/repos/${w.repo}` })),
  "GET /ui/repos/:repo*/-/tree": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/tree`,
  })),
  "GET /ui/repos/:repo*/-/tree/:path*": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/tree/docs`,
  })),
  "GET /ui/repos/:repo*/-/compare": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/compare?from=main&to=main`,
  })),
  "GET /ui/repos/:repo*/-/file/:path*": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/file/${w.file}`,
  })),
  "GET /ui/repos/:repo*/-/raw/:path*": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/raw/${w.file}`,
  })),
  "GET /ui/repos/:repo*/-/plain/:path*": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/plain/${w.file}`,
  })),
  "GET /ui/repos/:repo*/-/search": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/search?q=hello`,
  })),
  "GET /ui/repos/:repo*/-/find": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/find?q=md`,
  })),
  "GET /ui/repos/:repo*/-/history": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/history`,
  })),
  "GET /ui/repos/:repo*/-/commit/:sequence": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/commit/${w.sequence}`,
  })),
  "GET /ui/repos/:repo*/-/branches": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/branches`,
  })),
  "POST /ui/repos/:repo*/-/branches": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/branches`,
    form: { name: w.unique("new") },
  })),
  "GET /ui/repos/:repo*/-/edit": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/edit?branch=${w.branch}`,
  })),
  "POST /ui/repos/:repo*/-/commit [to a branch]": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/commit`,
    form: { branch: await w.freshBranchWithCommit(), path: "web.md", content: "web\n", message: "authz" },
  })),
  "POST /ui/repos/:repo*/-/commit [to main]": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/commit`,
    form: { branch: "main", path: w.unique("web"), content: "web\n", message: "authz" },
  })),
  "GET /ui/repos/:repo*/-/branch/:branch*": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/branch/${w.branch}`,
  })),
  "POST /ui/repos/:repo*/-/branch/:branch*/review": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/branch/${await w.freshBranchWithCommit()}/review`,
    form: { status: "approved", body: "authz" },
  })),
  "POST /ui/repos/:repo*/-/branch/:branch*/merge": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/branch/${await w.freshBranchWithCommit()}/merge`,
    form: {},
  })),
  "POST /ui/repos/:repo*/-/branch/:branch*/auto-merge": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/branch/${await w.freshBranchWithCommit()}/auto-merge`,
    form: { state: "on" },
  })),
  "GET /ui/repos/:repo*/-/issues": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/issues`,
  })),
  "POST /ui/repos/:repo*/-/issues": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/issues`,
    form: { title: "authz", body: "", labels: "", assignees: "" },
  })),
  "GET /ui/repos/:repo*/-/issues/:number": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/issues/${await w.freshIssue(w.colleague)}`,
  })),
  "POST /ui/repos/:repo*/-/issues/:number/comments": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/issues/${await w.freshIssue(w.colleague)}/comments`,
    form: { body: "authz" },
  })),
  "POST /ui/repos/:repo*/-/issues/:number/close [another's]": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/issues/${await w.freshIssue(w.colleague)}/close`,
    form: {},
  })),
  "POST /ui/repos/:repo*/-/issues/:number/close [own]": repoRoute(async (w, p) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/issues/${await w.freshIssue(authorFor(w, p))}/close`,
    form: {},
  })),
  "POST /ui/repos/:repo*/-/issues/:number/reopen [another's]": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/issues/${await w.freshIssue(w.colleague, { closed: true })}/reopen`,
    form: {},
  })),
  "POST /ui/repos/:repo*/-/issues/:number/reopen [own]": repoRoute(async (w, p) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/issues/${await w.freshIssue(authorFor(w, p), { closed: true })}/reopen`,
    form: {},
  })),
  "GET /ui/repos/:repo*/-/proposals": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/proposals`,
  })),
  "POST /ui/repos/:repo*/-/proposals": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/proposals`,
    form: { branch: await w.freshBranch(w.repo), title: "authz", description: "" },
  })),
  "POST /ui/repos/:repo*/-/proposals/:id/edit [another's]": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/proposals/${await w.freshProposal(w.colleague)}/edit`,
    form: { title: "patched", description: "" },
  })),
  "POST /ui/repos/:repo*/-/proposals/:id/edit [own]": repoRoute(async (w, p) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/proposals/${await w.freshProposal(authorFor(w, p))}/edit`,
    form: { title: "patched", description: "" },
  })),
  "POST /ui/repos/:repo*/-/proposals/:id/close [another's]": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/proposals/${await w.freshProposal(w.colleague)}/close`,
    form: {},
  })),
  "POST /ui/repos/:repo*/-/proposals/:id/close [own]": repoRoute(async (w, p) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/proposals/${await w.freshProposal(authorFor(w, p))}/close`,
    form: {},
  })),
  "GET /ui/repos/:repo*/-/proposals/:ref [number]": repoRoute(async (w) => {
    const { number } = okBody(
      await api(w.as({ identity: w.colleague })).get("/repos/:repo*/-/proposals/:id", {
        params: { repo: w.repo, id: w.proposal },
      }),
    );
    return { method: "GET", path: `/ui/repos/${w.repo}/-/proposals/${number}` };
  }),
  "GET /ui/repos/:repo*/-/proposals/:ref [uuid]": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/proposals/${w.proposal}`,
  })),
  "POST /ui/repos/:repo*/-/branch/:branch*/comment": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/branch/${w.branch}/comment`,
    form: { path: w.file, body: "authz" },
  })),
  "GET /ui/repos/:repo*/-/archive": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/archive?at=${w.sequence}`,
  })),
  "GET /ui/repos/:repo*/-/releases": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/releases`,
  })),
  "GET /ui/repos/:repo*/-/members": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/members`,
  })),
  "GET /ui/repos/:repo*/-/ci": repoRoute(async (w) => ({ method: "GET", path: `/ui/repos/${w.repo}/-/ci` })),
  "POST /ui/repos/:repo*/-/ci": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/ci`,
    form: { branch: w.ciBranch },
  })),
  "GET /ui/repos/:repo*/-/ci/:run": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/ci/${w.jobs.job.id}`,
  })),
  "GET /ui/repos/:repo*/-/ci/:run/log/:check*": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/ci/${w.jobs.job.id}/log/${w.loggedCheck}`,
  })),
  "GET /ui/repos/:repo*/-/ci/:run/raw/:check*": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/ci/${w.jobs.job.id}/raw/${w.loggedCheck}`,
  })),
  "GET /ui/repos/:repo*/-/ci/:run/tail/:check*": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/ci/${w.jobs.job.id}/tail/${w.loggedCheck}?after=0`,
  })),
  "GET /ui/repos/:repo*/-/ci/checks/:check*": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/ci/checks/${w.loggedCheck}?branch=${w.branch}`,
  })),
  "POST /ui/repos/:repo*/-/members/roles": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/members/roles`,
    form: { action: "set", identity: `${w.unique("new")}@authz.test`, role: "reader" },
  })),
  "POST /ui/repos/:repo*/-/members/org": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/members/org`,
    form: { action: "remove", identity: await w.freshMember(w.org) },
  })),
  "POST /ui/repos/:repo*/-/members/invites": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/members/invites`,
    form: { email: `${w.unique("invited")}@authz.test`, role: "member" },
  })),
  // By id, for the invitee only: an invitation to someone else is as absent, whoever asks.
  "POST /ui/invites/:id/accept [to another]": {
    build: async (w) => {
      const { id } = await w.freshInvite(w.org, `${w.unique("invited")}@authz.test`);
      return { method: "POST", path: `/ui/invites/${id}/accept`, form: {} };
    },
    notFound: "INVITE_NOT_FOUND",
  },
  "POST /ui/invites/:id/accept [to caller]": {
    build: async (w, p) => {
      const org = await w.freshOrg({ withRepo: false });
      const email =
        p === "anonymous" || isJobPersona(p) ? `${w.unique("invited")}@authz.test` : identities[p];
      const { id } = await w.freshInvite(org, email);
      return { method: "POST", path: `/ui/invites/${id}/accept`, form: {} };
    },
    notFound: "INVITE_NOT_FOUND",
  },
  "GET /ui/repos/:repo*/-/secrets": repoRoute(async (w) => ({
    method: "GET",
    path: `/ui/repos/${w.repo}/-/secrets`,
  })),
  "POST /ui/repos/:repo*/-/secrets": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/secrets`,
    form: { name: w.unique("WEB").replace("-", "_"), value: "authz-value" },
  })),
  "POST /ui/repos/:repo*/-/secrets/:secret/delete": repoRoute(async (w) => ({
    method: "POST",
    path: `/ui/repos/${w.repo}/-/secrets/${await w.freshSecret(w.repo)}/delete`,
    form: {},
  })),
};

/** The error code a refused cell must carry; none for a success. */
function expectedCode(status: number, req: Request, p: Persona): ErrorCode | undefined {
  if (status === 400) return req.badRequest;
  if (status === 401) return "UNAUTHENTICATED";
  if (status === 403)
    return (typeof req.forbidden === "function" ? req.forbidden(p) : req.forbidden) ?? "FORBIDDEN";
  if (status === 404) return req.notFound;
  return undefined;
}

const app = useFixture(() => startTestApp(authzEnv));
const world = useFixture(() => World.create(app));

const routeOf = (row: string) => row.replace(/ \[.*\]$/, "");

for (const [row, statuses] of Object.entries(matrix)) {
  describe(row, () => {
    it.each(personas.map((p) => [p, statuses[p]] as const))("%s → %i", async (persona, status) => {
      const req = requests[row];
      if (!req) return expect.fail(`no request builder for "${row}"`);
      const call = await req.build(world, persona);
      const res = await send(world, persona, call);
      const code =
        typeof res.body === "object" && res.body !== null && "code" in res.body ? res.body.code : undefined;
      expect(
        { status: res.status, code },
        `${persona}: ${call.method} ${call.path} → ${JSON.stringify(res.body)}`,
      ).toEqual({ status, code: expectedCode(status, req, persona) });
      if (req.stream && status === 200)
        expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    });
  });
}

describe("matrix coverage", () => {
  it("has a row for every route of functions/groups.ts allRoutes, and no row for anything else", () => {
    const routes = allRoutes.map(routeKey).sort();
    const rows = [...new Set(Object.keys(matrix).map(routeOf))].sort();
    expect(rows).toEqual(routes);
  });
  it("has a request builder for every row and a row for every builder", () => {
    expect(Object.keys(requests).sort()).toEqual(Object.keys(matrix).sort());
  });
});

describe("visibility beyond the status codes", () => {
  it("answers a stranger the same for an existing repo as for a missing one", async () => {
    const stranger = world.as("stranger");
    const existing = await stranger.get(`/repos/${world.repo}/-/branches`);
    const missing = await stranger.get(`/repos/${world.org}/no-such-repo/-/branches`);
    expect(existing.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(errorOf(existing).code).toBe(errorOf(missing).code);
    const strip = (m: string) => m.replaceAll(world.repo, "X").replaceAll(`${world.org}/no-such-repo`, "X");
    expect(strip(errorOf(existing).error)).toBe(strip(errorOf(missing).error));
  });

  it("answers a stranger the same for an existing org as for a missing one", async () => {
    const stranger = world.as("stranger");
    const existing = await stranger.get(`/orgs/${world.org}/members`);
    const missing = await stranger.get("/orgs/no-such-org/members");
    expect([existing.status, missing.status]).toEqual([404, 404]);
    expect(errorOf(existing).code).toBe("ORG_NOT_FOUND");
    expect(errorOf(missing).code).toBe("ORG_NOT_FOUND");
  });

  it("lists to a stranger neither the org nor its repos", async () => {
    const stranger = api(world.as("stranger"));
    const orgs = okBody(await stranger.get("/orgs"));
    const repos = okBody(await stranger.get("/repos"));
    expect(orgs.orgs.map((o) => o.name)).not.toContain(world.org);
    expect(repos.repos.map((r) => r.name)).not.toContain(world.repo);
  });

  it("lists the org and the repo to a repo reader, an org member and a global admin", async () => {
    for (const p of ["reader", "orgMember", "globalAdmin"] as const) {
      const c = api(world.as(p));
      const orgs = okBody(await c.get("/orgs")).orgs.map((o) => o.name);
      const repos = okBody(await c.get("/repos")).repos.map((r) => r.name);
      expect(orgs, p).toContain(world.org);
      expect(repos, p).toContain(world.repo);
    }
  });

  it("lists a subscription to its creator and to a global admin only", async () => {
    const ids = async (c: Client) =>
      okBody(await api(c).get("/subscriptions")).subscriptions.map((x) => x.id);
    expect(await ids(world.as({ identity: world.colleague }))).toContain(world.subscription);
    expect(await ids(world.as("globalAdmin"))).toContain(world.subscription);
    for (const p of ["stranger", "reader", "admin", "orgOwner"] as const)
      expect(await ids(world.as(p)), p).not.toContain(world.subscription);
  });

  it("answers others the same for an existing subscription as for a missing one", async () => {
    const admin = world.as("admin");
    const missing = "00000000-0000-4000-8000-000000000000";
    for (const suffix of ["", "/resume"]) {
      const method = suffix ? "POST" : "DELETE";
      const existing = await admin.raw(method, `/subscriptions/${world.subscription}${suffix}`);
      const absent = await admin.raw(method, `/subscriptions/${missing}${suffix}`);
      expect([existing.status, absent.status], method).toEqual([404, 404]);
      expect([errorOf(existing).code, errorOf(absent).code]).toEqual([
        "SUBSCRIPTION_NOT_FOUND",
        "SUBSCRIPTION_NOT_FOUND",
      ]);
      expect(errorOf(existing).error.replace(world.subscription, "X")).toBe(
        errorOf(absent).error.replace(missing, "X"),
      );
    }
  });

  it("answers a job token of another repo the same for the fixture repo as for a missing one", async () => {
    const job = world.as("otherRepoJob");
    const existing = await job.get(`/repos/${world.repo}/-/branches`);
    const missing = await job.get(`/repos/${world.org}/no-such-repo/-/branches`);
    expect([existing.status, missing.status]).toEqual([404, 404]);
    expect([errorOf(existing).code, errorOf(missing).code]).toEqual(["REPO_NOT_FOUND", "REPO_NOT_FOUND"]);
    const strip = (m: string) => m.replaceAll(world.repo, "X").replaceAll(`${world.org}/no-such-repo`, "X");
    expect(strip(errorOf(existing).error)).toBe(strip(errorOf(missing).error));
  });

  it("refuses a job token everything but reads and check runs with one message, and records its reports as ci-job:<id>", async () => {
    const job = world.as("job");
    for (const res of [
      await job.get("/orgs"),
      await job.post(`/repos/${world.repo}/-/merge`, { branch: "x" }),
    ]) {
      expect(res.body).toEqual({
        code: "FORBIDDEN",
        error: "a CI job token may only read its repo and report check runs",
      });
    }
    const report = await api(job).post("/repos/:repo*/-/check", {
      params: { repo: world.repo },
      body: { branch: world.branch, check_name: `authz/${world.unique("job-check")}`, status: "passed" },
    });
    expect(report.status, JSON.stringify(report.body)).toBe(201);
    expect(okBody(report).reporter).toMatch(/^ci-job:[0-9a-f-]{36}$/);
    const other = await api(job).post("/repos/:repo*/-/check", {
      params: { repo: world.repo },
      body: { branch: "main", check_name: "authz/job-on-main", status: "passed" },
    });
    expect([other.status, errorOf(other).code]).toEqual([403, "FORBIDDEN"]);
  });

  it("lets a plain member leave the org (removing themselves), but not remove others", async () => {
    const leaver = await world.freshMember(world.org);
    const other = await world.freshMember(world.org);
    const c = app.as(leaver);
    expect((await c.delete(`/orgs/${world.org}/members/${other}`)).status).toBe(403);
    expect((await c.delete(`/orgs/${world.org}/members/${leaver}`)).status).toBe(204);
  });
});
