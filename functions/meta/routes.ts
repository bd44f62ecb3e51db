import { z } from "zod";
import { openApiDocument } from "../../shared/http/openapi.ts";
import { type AnyRoute, ok, route } from "../../shared/http/route.ts";

/** The API's own description, generated from the route tables it describes. */
export function metaRoutes(described: () => AnyRoute[]): AnyRoute[] {
  let document: unknown;
  return [
    route({
      method: "GET",
      path: "/openapi.json",
      access: "public",
      summary: "The OpenAPI document of every endpoint",
      responses: { 200: z.looseObject({ openapi: z.string() }) },
      handler: async () => {
        document ??= openApiDocument(described());
        return ok(document);
      },
    }),
  ];
}
