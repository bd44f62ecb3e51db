import { z } from "zod";
import { segmentsOf } from "./match.ts";
import { type Declared, errorBody } from "./responses.ts";
import { type AccessKind, type AnyRoute, kindOf } from "./route.ts";

type JsonSchema = Record<string, unknown>;

const inputSchema = (schema: z.ZodType): JsonSchema =>
  z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
/** A response body's JSON Schema, without the `$schema` line the document already implies. */
function outputSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    io: "output",
    unrepresentable: "any",
  }) as JsonSchema;
  return rest;
}

const errorRef = { $ref: "#/components/schemas/Error" };

function successResponse(declared: Declared): JsonSchema {
  if (declared === null) return { description: "No content" };
  if ("redirect" in declared)
    return { description: "A redirect", headers: { location: { schema: { type: "string" } } } };
  if ("contentType" in declared)
    return { description: "Success", content: { [declared.contentType]: { schema: { type: "string" } } } };
  return { description: "Success", content: { "application/json": { schema: outputSchema(declared) } } };
}

/** Errors each kind of access can answer before the handler runs (shared/http/access.ts). */
const accessErrors: Record<AccessKind, number[]> = {
  public: [],
  user: [401, 403],
  repo: [401, 403, 404],
  presigned: [401, 403, 404],
  signedUrl: [401, 403],
  requestToken: [401],
  worker: [401, 403],
  internal: [401],
};

const errorDescriptions: Record<number, string> = {
  400: "Invalid input: VALIDATION_FAILED, MALFORMED_JSON or a more precise code",
  401: "Missing or invalid credentials",
  403: "Not allowed (role too low, a CI job token, an invalid or expired signature)",
  404: "Not found, or a repo the caller may not read",
  409: "Conflicts with the current state",
  412: "PRECONDITION_FAILED: If-Match names none of the branch head's entity tag",
};

/** The branch head's entity tag (shared/http/conditional.ts, docs/api.md). */
const etagHeader = {
  description: 'The branch head\'s entity tag, its sequence in quotes ("42"), for If-Match on a commit',
  schema: { type: "string" },
};

/**
 * The statuses a route answers: its declared successes, and the errors of its access kind, of
 * input validation (400, when it takes input), of a missing object (404, when its path names one)
 * and of a conflict (409, for a change). Every error has the one error body (docs/errors.md).
 */
function responses(route: AnyRoute): JsonSchema {
  const out: JsonSchema = {};
  for (const [status, declared] of Object.entries(route.responses))
    out[status] = successResponse(declared as Declared);
  if (route.etag === "branch-head" && route.method === "GET" && out["200"])
    out["200"] = { ...(out["200"] as JsonSchema), headers: { ETag: etagHeader } };
  const codes = new Set(accessErrors[kindOf(route.access)]);
  if (route.params || route.query || route.body) codes.add(400);
  if (route.path.includes(":")) codes.add(404);
  if (route.method !== "GET" && kindOf(route.access) !== "public") codes.add(409);
  if (route.etag === "branch-head" && route.method !== "GET") codes.add(412);
  for (const code of [...codes].sort())
    out[String(code)] = {
      description: errorDescriptions[code],
      content: { "application/json": { schema: errorRef } },
    };
  return out;
}

/** `/repos/:repo*\/-/file/:path*` → `/repos/{repo}/-/file/{path}`. */
export function openApiPath(pattern: string): string {
  return `/${segmentsOf(pattern)
    .map((s) => (s.startsWith(":") ? `{${s.slice(1).replace(/\*$/, "")}}` : s))
    .join("/")}`;
}

function parameters(route: AnyRoute): JsonSchema[] {
  const inPath = segmentsOf(route.path)
    .filter((s) => s.startsWith(":"))
    .map((s) => ({
      name: s.slice(1).replace(/\*$/, ""),
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
  const query = route.query ? inputSchema(route.query) : { properties: {} };
  const required = new Set((query["required"] as string[] | undefined) ?? []);
  const inQuery = Object.entries((query["properties"] ?? {}) as Record<string, JsonSchema>).map(
    ([name, schema]) => ({
      name,
      in: "query",
      required: required.has(name),
      schema,
    }),
  );
  const inHeader =
    route.etag === "branch-head" && route.method !== "GET"
      ? [
          {
            name: "If-Match",
            in: "header",
            required: false,
            description:
              'Write only if the branch head\'s entity tag is one of these ("42", as ETag gives it) or *; else 412',
            schema: { type: "string" },
          },
        ]
      : [];
  return [...inPath, ...inQuery, ...inHeader];
}

/** The credentials of each kind of caller (shared/http/access.ts). */
const securitySchemes = {
  bearer: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "OIDC ID token",
    description:
      "A person's ID token; on the routes that allow it, a CI job's job token (a JWT of this service)",
  },
  requestToken: {
    type: "http",
    scheme: "bearer",
    description: "A CI job's one-time request token, from its claim",
  },
  workerToken: {
    type: "http",
    scheme: "bearer",
    description: "A CI worker's identity: a Kubernetes service account token (a static token locally)",
  },
  signedUrl: {
    type: "apiKey",
    in: "query",
    name: "sig",
    description: "A URL signed with the server's key (`expires` and `sig` in the query)",
  },
  internalOidc: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "Google-signed OIDC token",
    description: "Cloud Tasks or Cloud Scheduler, by the token of their service account",
  },
} as const;

/** Any one of the listed schemes satisfies a route; none listed means no credentials. */
const securityOf: Record<AccessKind, (keyof typeof securitySchemes)[]> = {
  public: [],
  user: ["bearer"],
  repo: ["bearer"],
  presigned: ["bearer", "signedUrl"],
  signedUrl: ["bearer", "signedUrl"],
  requestToken: ["requestToken"],
  worker: ["workerToken"],
  internal: ["internalOidc"],
};

function accessLabel(route: AnyRoute): string {
  const access = route.access;
  if (typeof access === "string") return access;
  if ("signedUrl" in access) return "user-or-signed-url";
  return "orPresigned" in access ? `repo:${access.repo}-or-presigned` : `repo:${access.repo}`;
}

function operation(route: AnyRoute): JsonSchema {
  const op: JsonSchema = {
    summary: route.summary,
    parameters: parameters(route),
    "x-quire-access": accessLabel(route),
    responses: responses(route),
  };
  const security = securityOf[kindOf(route.access)];
  if (security.length > 0) op["security"] = security.map((scheme) => ({ [scheme]: [] }));
  if (route.body)
    op["requestBody"] = {
      required: true,
      content: { "application/json": { schema: inputSchema(route.body) } },
    };
  return op;
}

/** An OpenAPI 3.1 document generated from the route tables, so it cannot drift from what is served. */
export function openApiDocument(routes: readonly AnyRoute[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route) };
  }
  return {
    openapi: "3.1.0",
    info: { title: "Quire", version: "1" },
    components: {
      securitySchemes,
      schemas: { Error: outputSchema(errorBody) },
    },
    paths,
  };
}
