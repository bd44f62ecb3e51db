/**
 * The rules of secret names and sizes, free of zod and of the server, so the CI configuration's
 * parser and the CLI (which ship in the `quire` bundle) check them as the API does.
 */

/** The most bytes a secret's value may have (UTF-8): credentials, keys, a small config file. */
export const MAX_SECRET_BYTES = 64 * 1024;
/** The most secrets one check may name in `.svc/ci.yaml`. */
export const MAX_CHECK_SECRETS = 32;
const MAX_NAME_LENGTH = 128;
const NAME = /^[A-Z_][A-Z0-9_]*$/;

/** Why `name` is not a secret name, or null: an environment variable's shape, upper case. */
export function secretNameProblem(name: string): string | null {
  if (name.length === 0) return "must not be empty";
  if (name.length > MAX_NAME_LENGTH) return `must be at most ${MAX_NAME_LENGTH} characters`;
  if (!NAME.test(name))
    return "must look like an environment variable: A-Z, 0-9 and _, not starting with a digit (e.g. DEPLOY_TOKEN)";
  return null;
}
