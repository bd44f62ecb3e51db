import { allRoutes } from "../../functions/groups.ts";
import { openApiDocument } from "../../shared/http/openapi.ts";
import { sqlCatalogue } from "./sql-catalogue.ts";

/** The command that writes every snapshot; a stale snapshot's test failure names it. */
export const SNAPSHOT_COMMAND = "npm run snapshots";

/** Where the generated snapshots live, relative to the repository root. */
export const OPENAPI_FILE = "docs/openapi.json";
export const SCHEMA_FILE = "docs/schema.sql";
export const SQL_DIR = "docs/sql";

/** The OpenAPI document that `GET /openapi.json` serves, as committed text. */
export function openApiSnapshot(): string {
  return `${JSON.stringify(openApiDocument(allRoutes), null, 2)}\n`;
}

/**
 * The snapshots that need no database: path → contents. The SQL catalogue's files are all of
 * `docs/sql/`; a module whose SQL is gone loses its file.
 */
export function staticSnapshots(root: string): Map<string, string> {
  return new Map([[OPENAPI_FILE, openApiSnapshot()], ...sqlCatalogue(root)]);
}
