import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";

/*
 * What the CLI remembers of each repo's transparency log: `<config dir>/checkpoints.json`, per
 * server the log key seen first (trusted on first use, as ssh trusts a host key) and per repo the
 * last checkpoint verified, as the signed note the server sent. Written whole through a temporary
 * file and a rename, so a crash never leaves half a file.
 */

export interface Remembered {
  /** The signed note, exactly as received. */
  note: string;
  seen_at: string;
}

interface ServerEntry {
  key?: string;
  repos: Record<string, Remembered>;
}

interface CheckpointsFile {
  servers: Record<string, ServerEntry>;
}

export class CheckpointStore {
  readonly file: string;
  /** `file` names another store of the same shape: the witness keeps its own (witness.json). */
  constructor(dir: string, file = "checkpoints.json") {
    this.file = path.join(dir, file);
  }

  private async read(): Promise<CheckpointsFile> {
    try {
      const v = JSON.parse(await readFile(this.file, "utf8")) as Partial<CheckpointsFile> | null;
      return { servers: typeof v?.servers === "object" && v.servers !== null ? v.servers : {} };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return { servers: {} };
      throw new Error(`cannot read ${this.file}: ${(e as Error).message}`);
    }
  }

  private async update(change: (f: CheckpointsFile) => void): Promise<void> {
    const f = await this.read();
    change(f);
    await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(f, null, 2)}\n`, { mode: 0o600 });
    await rename(tmp, this.file);
  }

  private static entry(f: CheckpointsFile, server: string): ServerEntry {
    f.servers[server] ??= { repos: {} };
    return f.servers[server];
  }

  async key(server: string): Promise<string | undefined> {
    return (await this.read()).servers[server]?.key;
  }

  async pinKey(server: string, key: string): Promise<void> {
    await this.update((f) => {
      CheckpointStore.entry(f, server).key = key;
    });
  }

  async checkpoint(server: string, repo: string): Promise<Remembered | undefined> {
    return (await this.read()).servers[server]?.repos[repo];
  }

  async remember(server: string, repo: string, note: string, now: Date): Promise<void> {
    await this.update((f) => {
      CheckpointStore.entry(f, server).repos[repo] = { note, seen_at: now.toISOString() };
    });
  }
}
