import { z } from "zod";

/**
 * What a request may carry where a route reads nothing: no fields. Every request schema is strict
 * (`z.strictObject`, nested objects too), so a field or query parameter Quire does not know is
 * refused with 400 naming it instead of being silently ignored: a client that means something
 * (`dry_run`, a release's `body`) learns at once that it was not understood (docs/api.md).
 */
export const noFields = z.strictObject({});
