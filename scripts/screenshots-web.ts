import { spawnSync } from "node:child_process";
import { copyFile, mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { TOUR_PAGES } from "../test/web/tour-pages.ts";

/**
 * `npm run screenshots:web`: runs the page tour at desktop width (test/web/tour-desktop.test.ts),
 * which leaves a screenshot of every page under test-results/web/, and copies them (the viewport
 * as the page opens, not the whole page) to docs/web/<page>.png, where docs/web.md shows them.
 * With `pngquant` on the PATH (Debian's package of that name) they are reduced to a 256-colour
 * palette (about a third of the bytes, no visible change for flat pages); without it they are
 * copied as they are. `-- --reuse` copies the last tour run's screenshots without running it again.
 */
const root = fileURLToPath(new URL("..", import.meta.url));
const shots = path.join(root, "test-results/web");
const docs = path.join(root, "docs/web");

function run(command: string, args: string[]): boolean {
  return spawnSync(command, args, { cwd: root, stdio: "inherit" }).status === 0;
}

const hasPngquant = spawnSync("pngquant", ["--version"], { stdio: "ignore" }).status === 0;

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { reuse: { type: "boolean", default: false } } });
  if (!values.reuse && !run("npx", ["vitest", "run", "test/web/tour-desktop.test.ts"])) {
    process.stderr.write("screenshots:web: the page tour failed; docs/web/ left as it was\n");
    return 1;
  }
  await rm(docs, { recursive: true, force: true });
  await mkdir(docs, { recursive: true });
  for (const p of TOUR_PAGES) {
    const from = path.join(shots, `tour-desktop-${p.name}.png`);
    const to = path.join(docs, `${p.name}.png`);
    if (!(hasPngquant && run("pngquant", ["--force", "--strip", "--output", to, "256", "--", from])))
      await copyFile(from, to);
  }
  process.stdout.write(`screenshots:web: ${TOUR_PAGES.length} pages in docs/web/\n`);
  return 0;
}

process.exitCode = await main();
