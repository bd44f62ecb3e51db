import { z } from "zod";
import { DEFAULT_IMAGE_LIMITS, type ImageLimits } from "./layers.ts";

/**
 * A whole-number setting from the environment: unset or blank is `fallback`. Here, not in
 * worker/config.ts, because `quire ci run --local` reads the image limits too and its bundle must
 * not carry the server's configuration (test/cli/package.test.ts).
 */
export const integerSetting = (fallback: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === "") return fallback;
      const n = Number(v.trim());
      if (!/^\d+$/.test(v.trim()) || n < min || n > max) {
        ctx.addIssue({ code: "custom", message: `must be a whole number from ${min} to ${max}, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });

/** The image limits' settings, shared by the worker's configuration and `ci run --local`. */
export const imageLimitSettings = {
  SVC_CI_IMAGE_MAX_BYTES: integerSetting(DEFAULT_IMAGE_LIMITS.maxBytes, 1, Number.MAX_SAFE_INTEGER),
  SVC_CI_IMAGE_MAX_ENTRIES: integerSetting(DEFAULT_IMAGE_LIMITS.maxEntries, 1, 100_000_000),
};

/** `SVC_CI_IMAGE_MAX_BYTES` and `SVC_CI_IMAGE_MAX_ENTRIES` from `env`; throws naming a bad one. */
export function imageLimitsFromEnv(env: Record<string, string | undefined>): ImageLimits {
  const parsed = z.object(imageLimitSettings).safeParse({
    SVC_CI_IMAGE_MAX_BYTES: env["SVC_CI_IMAGE_MAX_BYTES"],
    SVC_CI_IMAGE_MAX_ENTRIES: env["SVC_CI_IMAGE_MAX_ENTRIES"],
  });
  if (!parsed.success)
    throw new Error(parsed.error.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; "));
  return { maxBytes: parsed.data.SVC_CI_IMAGE_MAX_BYTES, maxEntries: parsed.data.SVC_CI_IMAGE_MAX_ENTRIES };
}
