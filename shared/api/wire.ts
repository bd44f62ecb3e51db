import { z } from "zod";

/**
 * Building blocks of the response schemas: the wire as a client sees it. These files import zod
 * only, so a typed client or CLI can use them without the server.
 */

/** A timestamp: RFC 3339 in UTC, as JSON renders a Date. */
export const timestamp = z.iso.datetime({ offset: true });
/** A sequence number of a repo's commits (0: none yet). */
export const sequence = z.int().nonnegative();
/** The id of a file's content, or null where the file is deleted. */
export const versionId = z.string();
export const uuid = z.string();
