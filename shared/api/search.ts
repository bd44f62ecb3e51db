import { z } from "zod";

/** `GET /repos/{name}/-/search` (docs/search.md): files whose text contains the term, in path order. */
export const searchResponse = z.object({
  results: z.array(
    z.object({
      path: z.string(),
      /** The first matching lines (at most 5), 1-based; a line above 240 characters is cut around its first match, `…` where cut. */
      lines: z.array(z.object({ number: z.number().int(), text: z.string() })),
      /** Every matching line of the file, shown or not. */
      line_count: z.number().int(),
    }),
  ),
  /** More results follow: ask again with `after` = the last path. */
  more: z.boolean(),
  /** More than 1,000 texts of the repo match: the results come from 1,000 of them. */
  capped: z.boolean(),
});
export type SearchResponse = z.output<typeof searchResponse>;
