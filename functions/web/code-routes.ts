import { z } from "zod";
import { branchName, filePath, sequenceParam } from "../../shared/api/names.ts";
import { bytes, redirect } from "../../shared/http/responses.ts";
import { type Reply, route } from "../../shared/http/route.ts";
import { fileBytes } from "./pages/content.ts";
import { bytesReply, seeOther } from "./reply.ts";
import * as u from "./urls.ts";

/**
 * Reading code (docs/web.md, "Code and diffs"): a file's text as the browser's own plain-text
 * view (the file page's "Raw" link); a binary file is sent to its download. The file page, the commit page and the diffs are in routes.ts
 * and functions/web/pages/{content,diff,highlight}.ts.
 */

/** A file's bytes as a download: never rendered by the browser, so an HTML file never runs as this site. */
export function downloadReply(path: string, data: Buffer): Reply {
  const name = path.split("/").at(-1) ?? "file";
  return bytesReply(200, data, {
    "content-type": "application/octet-stream",
    "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
    "cache-control": "private, no-store",
  });
}

/**
 * Text the browser shows as text and nothing else: `text/plain` whatever the file's own type (an
 * HTML or SVG file is shown as its source), `nosniff` so the browser does not guess otherwise,
 * and `sandbox` so even a browser that did would run it in an opaque origin with no script.
 */
const PLAIN_TEXT_HEADERS = {
  "content-type": "text/plain; charset=utf-8",
  "x-content-type-options": "nosniff",
  "content-security-policy": "sandbox; default-src 'none'",
  "cache-control": "private, no-store",
};

export const codeRoutes = [
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/plain/:path*",
    access: { repo: "reader" },
    summary: "Web: a text file shown as plain text (binary files stay a download)",
    params: z.object({ repo: z.string(), path: filePath }),
    query: z.strictObject({ branch: branchName.default("main"), at: sequenceParam.optional() }),
    responses: { 200: bytes("text/plain"), 302: redirect },
    handler: async ({ ctx, repo, params, query }) => {
      const file = await fileBytes(ctx, repo, { ...query, path: params.path });
      if (file.binary) return seeOther(u.rawUrl(repo.repo.name, params.path, query));
      const name = params.path.split("/").at(-1) ?? "file";
      return bytesReply(200, file.data, {
        ...PLAIN_TEXT_HEADERS,
        "content-disposition": `inline; filename*=UTF-8''${encodeURIComponent(name)}`,
      });
    },
  }),
];
