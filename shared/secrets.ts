import { randomBytes } from "node:crypto";
import type { AppContext } from "./context.ts";
import type { Queryable } from "./db/pool.ts";
import { retryingOnce } from "./lazy.ts";

const GENERATED_BYTES = 32;
const secret_insert = `INSERT INTO server_secrets (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`;
const secret_select = `SELECT secret FROM server_secrets WHERE name = $1`;

/**
 * The secret stored in the database under `name`, created on first use. Concurrent instances may
 * both insert: the first insert wins, the other does nothing, and both then read the winner's.
 */
async function storedSecret(db: Queryable, name: string): Promise<Buffer> {
  await db.query(secret_insert, [name, randomBytes(GENERATED_BYTES)]);
  const { rows } = await db.query(secret_select, [name]);
  if (!rows[0]) throw new Error(`server secret '${name}' vanished after it was created`);
  return rows[0].secret as Buffer;
}

// Per context (one per process in production; several in one test process), each loaded once.
const loaders = new WeakMap<AppContext, Map<string, () => Promise<Buffer>>>();

/**
 * A random 32-byte secret that every instance on the database shares (`server_secrets`), for keys
 * the operator did not configure; read once per process. A failed read (the database away) is
 * not kept: the next call tries again.
 */
export function serverSecret(ctx: AppContext, name: string): Promise<Buffer> {
  const byName = loaders.get(ctx) ?? new Map<string, () => Promise<Buffer>>();
  loaders.set(ctx, byName);
  const load = byName.get(name) ?? retryingOnce(() => storedSecret(ctx.pool, name));
  byName.set(name, load);
  return load();
}
