import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { RepoAccess } from "../access/roles.ts";
import type { SecretResponse } from "../api/secrets.ts";
import type { Actor } from "../auth/actor.ts";
import type { AppContext } from "../context.ts";
import type { Queryable } from "../db/pool.ts";
import { withTx } from "../db/tx.ts";
import { fail } from "../errors.ts";
import { recordEvent } from "../events/record.ts";
import { keyWrapperOf, open, type Sealed, seal } from "./envelope.ts";

/**
 * Repo secrets (docs/secrets.md): set, list and delete, each one transaction with its event. No
 * function here returns or logs a value; only `openSecrets` (for a CI job, reveal.ts) opens one.
 */

/** The metadata columns: everything but the sealed bytes. */
const metadata_columns = `id::text, name, description, size_bytes, set_by, set_at, created_by, created_at`;

const secret_select_by_repo = `SELECT ${metadata_columns} FROM repo_secrets WHERE repo_id = $1 ORDER BY name`;

// One statement, so two admins setting one name at once both succeed, the later value winning;
// `xmax = 0` is true only for a row this statement inserted (a first set, not a replacement).
const secret_upsert = `
  INSERT INTO repo_secrets (id, repo_id, name, description, size_bytes, ciphertext, nonce, tag, wrapped_key,
    key_ref, created_by, created_at, set_by, set_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $11, $12)
  ON CONFLICT (repo_id, name) DO UPDATE SET
    description = excluded.description, size_bytes = excluded.size_bytes, ciphertext = excluded.ciphertext,
    nonce = excluded.nonce, tag = excluded.tag, wrapped_key = excluded.wrapped_key, key_ref = excluded.key_ref,
    set_by = excluded.set_by, set_at = excluded.set_at
  RETURNING ${metadata_columns}, xmax = 0 AS created`;

const secret_delete = `DELETE FROM repo_secrets WHERE repo_id = $1 AND name = $2 RETURNING id`;

const secret_select_sealed = `
  SELECT name, ciphertext, nonce, tag, wrapped_key, key_ref FROM repo_secrets
  WHERE repo_id = $1 AND name = ANY ($2::text[])`;

interface MetadataRow {
  id: string;
  name: string;
  description: string;
  size_bytes: number;
  set_by: string;
  set_at: Date;
  created_by: string;
  created_at: Date;
}

const toResponse = (row: MetadataRow): SecretResponse => ({
  id: row.id,
  name: row.name,
  description: row.description,
  size_bytes: row.size_bytes,
  set_by: row.set_by,
  set_at: row.set_at.toISOString(),
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
});

/**
 * What the ciphertext is bound to (AES-GCM's associated data): the repo's id and the name, so a
 * sealed row copied to another repo or name does not open.
 */
const boundTo = (repoId: number, name: string) => Buffer.from(`quire-repo-secret\0${repoId}\0${name}`);

/** The secrets of a repo, by name: metadata only. */
export async function listSecrets(db: Queryable, access: RepoAccess): Promise<SecretResponse[]> {
  const { rows } = await db.query<MetadataRow>(secret_select_by_repo, [access.repo.id]);
  return rows.map(toResponse);
}

/**
 * Creates or replaces a secret: sealed before the transaction starts (a KMS round trip holds no
 * lock), then written with `com.svc.secret.set`, whose data has the name and size, never the value.
 */
export async function setSecret(
  ctx: AppContext,
  actor: Actor,
  access: RepoAccess,
  input: { name: string; value: string; description?: string | undefined },
): Promise<SecretResponse> {
  const value = Buffer.from(input.value, "utf8");
  const sealed = await seal(keyWrapperOf(ctx), value, boundTo(access.repo.id, input.name));
  const now = ctx.clock.now();
  return withTx(ctx.pool, async (tx) => {
    const { rows } = await tx.query<MetadataRow & { created: boolean }>(secret_upsert, [
      randomUUID(),
      access.repo.id,
      input.name,
      input.description ?? "",
      value.length,
      sealed.ciphertext,
      sealed.nonce,
      sealed.tag,
      sealed.wrappedKey,
      sealed.keyRef,
      actor.identity,
      now,
    ]);
    const row = rows[0];
    if (!row) throw new Error("the secret upsert returned no row");
    await recordEvent(
      tx,
      "com.svc.secret.set",
      {
        repo: access.repo.name,
        name: row.name,
        size_bytes: row.size_bytes,
        created: row.created,
        set_by: actor.identity,
      },
      { repo: access.repo.name },
    );
    return toResponse(row);
  });
}

/** Deletes a secret, with `com.svc.secret.deleted`; 404 SECRET_NOT_FOUND when there is none. */
export async function deleteSecret(
  pool: pg.Pool,
  actor: Actor,
  access: RepoAccess,
  name: string,
): Promise<void> {
  await withTx(pool, async (tx) => {
    const { rows } = await tx.query(secret_delete, [access.repo.id, name]);
    if (!rows[0]) fail("SECRET_NOT_FOUND", `'${access.repo.name}' has no secret '${name}'`);
    await recordEvent(
      tx,
      "com.svc.secret.deleted",
      { repo: access.repo.name, name, deleted_by: actor.identity },
      { repo: access.repo.name },
    );
  });
}

/** The values of the secrets of `repoId` named in `names` that exist, by name. */
export async function openSecrets(
  ctx: AppContext,
  db: Queryable,
  repoId: number,
  names: string[],
): Promise<Map<string, Buffer>> {
  const { rows } = await db.query<{
    name: string;
    ciphertext: Buffer;
    nonce: Buffer;
    tag: Buffer;
    wrapped_key: Buffer;
    key_ref: string;
  }>(secret_select_sealed, [repoId, names]);
  const keys = keyWrapperOf(ctx);
  const opened = await Promise.all(
    rows.map(async (row) => {
      const sealed: Sealed = {
        ciphertext: row.ciphertext,
        nonce: row.nonce,
        tag: row.tag,
        wrappedKey: row.wrapped_key,
        keyRef: row.key_ref,
      };
      return [row.name, await open(keys, sealed, boundTo(repoId, row.name))] as const;
    }),
  );
  return new Map(opened);
}
