import { z } from "zod";
import { commitRequest } from "../../shared/api/commits.ts";
import { branchName, filePath } from "../../shared/api/names.ts";
import { createCommit } from "../../shared/commits/commit.ts";
import { fail } from "../../shared/errors.ts";
import { bytes, redirect } from "../../shared/http/responses.ts";
import { route } from "../../shared/http/route.ts";
import { csrfField } from "./csrf.ts";
import { csrfToken, orRefusedPage, parseForm, type Typed, uploadFormFields } from "./forms.ts";
import { commitForm, deleteForm, editorPage } from "./pages/editor.ts";
import { htmlReply, seeOther } from "./reply.ts";
import * as u from "./urls.ts";

/**
 * Editing from the browser (docs/web.md): the editor page and the commit it posts, which runs the
 * API's `createCommit` with the API's request schema, so the same rules hold (writers commit to
 * branches, only maintainers to main; `expected_head_sequence` refuses a commit made meanwhile).
 */

const repoParams = z.object({ repo: z.string() });

const commitFields = z.strictObject({
  ...csrfToken,
  branch: branchName,
  // The page always sends the head it showed; a form without one commits without the check, as the API.
  expected_head_sequence: z
    .string()
    .regex(/^\d{1,15}$/, "must be a sequence number")
    .optional(),
  path: filePath,
  content: z.string().optional(),
  message: z.string(),
  delete: z.literal("true").optional(),
  binary: z.literal("true").optional(),
});

/** A textarea posts CRLF line ends (HTML's form encoding); files in repos keep the LF they had. */
const textOf = (content: string) => Buffer.from(content.replace(/\r\n/g, "\n"), "utf8");

export const commitRoutes = [
  route({
    method: "GET",
    path: "/ui/repos/:repo*/-/edit",
    access: { repo: "writer" },
    summary: "Web: edit a file, add one or delete one, on a branch (writers; main needs maintainer)",
    params: repoParams,
    query: z.strictObject({ branch: branchName.default("main"), path: filePath.optional() }),
    responses: { 200: bytes("text/html") },
    handler: async (call) => {
      const { ctx, actor, repo, query } = call;
      return htmlReply(await editorPage(ctx, actor, repo, query, csrfField(actor)));
    },
  }),
  route({
    method: "POST",
    path: "/ui/repos/:repo*/-/commit",
    access: { repo: "writer" },
    summary: "Web: commit an edited, added, uploaded or deleted file to a branch (form post)",
    params: repoParams,
    responses: { 303: redirect },
    handler: async (call) => {
      const { ctx, actor, repo } = call;
      const name = repo.repo.name;
      const { typed, upload } = await uploadFormFields(call);
      const deleting = typed["delete"] === "true";
      const csrf = csrfField(actor);
      const refused = {
        title: deleting ? "The file was not deleted" : "The commit was refused",
        form: (t: Typed) =>
          deleting
            ? deleteForm(name, csrf, { ...t, delete_message: t["message"] ?? "" })
            : commitForm(name, csrf, t),
        back: {
          label: `Back to the files on ${typed["branch"] ?? "main"}`,
          url: u.treeUrl(name, { branch: typed["branch"] ?? "main" }),
        },
      };
      return orRefusedPage(call, typed, refused, async () => {
        const form = parseForm(typed, commitFields);
        if (form.binary && !deleting && !upload)
          fail("VALIDATION_FAILED", "a binary file is replaced only by uploading a file");
        const content = deleting ? null : (upload ?? textOf(form.content ?? "")).toString("base64");
        const input = parseForm(
          {
            branch: form.branch,
            expected_head_sequence:
              form.expected_head_sequence === undefined ? undefined : Number(form.expected_head_sequence),
            message: form.message,
            files: [{ path: form.path, content }],
          },
          commitRequest,
        );
        await createCommit(ctx, actor, repo, input);
        return seeOther(
          deleting
            ? u.treeUrl(name, { branch: form.branch })
            : u.fileUrl(name, form.path, { branch: form.branch }),
          303,
        );
      });
    },
  }),
];
