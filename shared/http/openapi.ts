import { z } from "zod";
import { segmentsOf } from "./match.ts";
import type { AnyRoute } from "./route.ts";

type JsonSchema = Record<string, unknown>;

const inputSchema = (schema: z.ZodType): JsonSchema =>
  z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;

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
  return [...inPath, ...inQuery];
}

function operation(route: AnyRoute): JsonSchema {
  const op: JsonSchema = {
    summary: route.summary,
    parameters: parameters(route),
    "x-quire-access": typeof route.access === "object" ? `repo:${route.access.repo}` : route.access,
    responses: {
      default: { description: "Success, or an error `{code, error}` (docs/errors.md)" },
    },
  };
  if (route.access !== "public") op["security"] = [{ bearer: [] }];
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
      securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "OIDC ID token" } },
    },
    paths,
  };
}
