import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/*
 * Where sign-ins are kept: `$XDG_CONFIG_HOME/quire/credentials.json` (default `~/.config/quire`),
 * one entry per server, the file mode 0600 in a 0700 folder, written whole through a temporary
 * file and a rename so a crash never leaves half a file.
 */

/** One server's sign-in. */
export interface Session {
  issuer: string;
  client_id: string;
  /** Sent back on refresh where the provider wants it (Google's installed-app clients). */
  client_secret?: string;
  token_endpoint: string;
  id_token: string;
  refresh_token?: string;
  /** Unix seconds when the ID token expires. */
  expires_at: number;
  email?: string;
}

interface CredentialsFile {
  last_server?: string;
  servers: Record<string, Session>;
}

const isSession = (v: unknown): v is Session => {
  const s = v as Partial<Session> | null;
  return (
    typeof s === "object" &&
    s !== null &&
    typeof s.issuer === "string" &&
    typeof s.client_id === "string" &&
    typeof s.token_endpoint === "string" &&
    typeof s.id_token === "string" &&
    typeof s.expires_at === "number"
  );
};

/** The file's sign-ins that have every field a session needs (no zod: it would double the CLI's start). */
function parseFile(v: unknown): CredentialsFile {
  const raw = (typeof v === "object" && v !== null ? v : {}) as { last_server?: unknown; servers?: unknown };
  const servers = Object.fromEntries(
    Object.entries(typeof raw.servers === "object" && raw.servers !== null ? raw.servers : {}).filter(
      (e): e is [string, Session] => isSession(e[1]),
    ),
  );
  return { ...(typeof raw.last_server === "string" ? { last_server: raw.last_server } : {}), servers };
}

/** The user's config folder for quire. */
export function configDir(env: Record<string, string | undefined>): string {
  const base = env["XDG_CONFIG_HOME"]?.trim() || path.join(env["HOME"] || os.homedir(), ".config");
  return path.join(base, "quire");
}

/** A server's URL as the key of its entry: no trailing slash. */
export const serverKey = (server: string) => server.replace(/\/+$/, "");

export class CredentialStore {
  readonly file: string;
  private readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
    this.file = path.join(dir, "credentials.json");
  }

  async read(): Promise<CredentialsFile> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { servers: {} };
      throw err;
    }
    // A file hand-edited into nonsense: treat as signed out, not as a crash.
    try {
      return parseFile(JSON.parse(text));
    } catch {
      return { servers: {} };
    }
  }

  private async write(data: CredentialsFile): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    // mkdir's mode applies only to a folder it creates: one the user (or an older quire) made
    // group- or world-writable would let others swap the file, so tighten what is there too.
    await chmod(this.dir, 0o700);
    const tmp = `${this.file}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    await chmod(tmp, 0o600);
    await rename(tmp, this.file);
  }

  async get(server: string): Promise<Session | undefined> {
    return (await this.read()).servers[serverKey(server)];
  }

  async lastServer(): Promise<string | undefined> {
    return (await this.read()).last_server;
  }

  /** Keeps a sign-in; `makeLast` (a login) also makes it the server used when none is named. */
  async save(server: string, s: Session, makeLast = true): Promise<void> {
    const data = await this.read();
    data.servers[serverKey(server)] = s;
    if (makeLast) data.last_server = serverKey(server);
    await this.write(data);
  }

  /** Forgets a server's sign-in; true when there was one. */
  async remove(server: string): Promise<boolean> {
    const data = await this.read();
    const key = serverKey(server);
    if (!(key in data.servers)) return false;
    delete data.servers[key];
    if (data.last_server === key) delete data.last_server;
    if (Object.keys(data.servers).length === 0) await rm(this.file, { force: true });
    else await this.write(data);
    return true;
  }
}
