/**
 * Derives terraform/schema/google-provider.json: for each google resource type terraform/ uses,
 * its argument names, which are required, and its nested blocks. The source is
 * `@cdktf/provider-google` (generated from the provider's own schema), which is far too large to
 * keep as a dependency, so this runs once, by hand, whenever terraform/ starts using a new
 * resource type:
 *
 *   mkdir /tmp/pg && (cd /tmp/pg && npm install --no-save --ignore-scripts @cdktf/provider-google)
 *   npm exec -- tsx scripts/terraform-schema.ts /tmp/pg/node_modules/@cdktf/provider-google
 *
 * Each property of the package's `*Config` interfaces carries its Terraform name in its doc link
 * (`.../sql_user#instance SqlUser#instance`); a property typed by another interface of the same
 * file is a nested block.
 *
 * An entry the committed file lists under `described_by_hand` was added without the package (it
 * says from what); rerunning this replaces it with the derived one.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

interface Attribute {
  required: boolean;
}
export interface BlockSchema {
  attributes: Record<string, Attribute>;
  blocks: Record<string, BlockSchema & { required: boolean }>;
}

interface Property {
  name: string;
  required: boolean;
  typeName: string | undefined;
}

const TERRAFORM_DIR = path.resolve(import.meta.dirname, "../terraform");

/** The `google_*` resource and data source types the .tf files use. */
function usedTypes(): { resources: string[]; data: string[] } {
  const text = readdirSync(TERRAFORM_DIR)
    .filter((f) => f.endsWith(".tf"))
    .map((f) => readFileSync(path.join(TERRAFORM_DIR, f), "utf8"))
    .join("\n");
  const find = (kind: string) =>
    [
      ...new Set([...text.matchAll(new RegExp(`^${kind} "(google_\\w+)"`, "gm"))].map((m) => m[1] as string)),
    ].sort();
  return { resources: find("resource"), data: find("data") };
}

/** Every interface of a .d.ts file, as its properties. */
function interfacesOf(dts: string): Map<string, Property[]> {
  const out = new Map<string, Property[]>();
  for (const m of dts.matchAll(/export interface (\w+)(?: extends [^{]+)? \{([\s\S]*?)\n\}/g)) {
    const props: Property[] = [];
    const body = m[2] as string;
    for (const p of body.matchAll(/#(\w+) \w+#\w+\}[\s\S]*?\*\/\s*readonly (\w+)(\?)?: ([^;]+);/g)) {
      const typeName = /^([A-Z]\w+)/.exec((p[4] as string).trim())?.[1];
      props.push({ name: p[1] as string, required: p[3] === undefined, typeName });
    }
    out.set(m[1] as string, props);
  }
  return out;
}

function blockOf(interfaces: Map<string, Property[]>, name: string): BlockSchema {
  const schema: BlockSchema = { attributes: {}, blocks: {} };
  for (const p of interfaces.get(name) ?? []) {
    if (p.typeName && interfaces.has(p.typeName))
      schema.blocks[p.name] = { required: p.required, ...blockOf(interfaces, p.typeName) };
    else if (p.name !== "id") schema.attributes[p.name] = { required: p.required };
  }
  return schema;
}

function schemaOf(pkg: string, type: string, folderPrefix: string): BlockSchema {
  const folder = folderPrefix + type.replace(/^google_/, "").replaceAll("_", "-");
  const dts = readFileSync(path.join(pkg, "lib", folder, "index.d.ts"), "utf8");
  const interfaces = interfacesOf(dts);
  const config = [...interfaces.keys()].find(
    (k) =>
      k.endsWith("Config") &&
      /extends cdktf\.TerraformMetaArguments/.test(
        dts.slice(dts.indexOf(`interface ${k}`), dts.indexOf(`interface ${k}`) + 200 + k.length),
      ),
  );
  if (!config) throw new Error(`no Config interface for ${type} in ${folder}`);
  return blockOf(interfaces, config);
}

function main(): void {
  const pkg = process.argv[2];
  if (!pkg) throw new Error("usage: tsx scripts/terraform-schema.ts <path to @cdktf/provider-google>");
  const { version } = JSON.parse(readFileSync(path.join(pkg, "package.json"), "utf8")) as { version: string };
  const { resources, data } = usedTypes();
  const out = {
    source: `@cdktf/provider-google ${version}, derived by scripts/terraform-schema.ts`,
    resources: Object.fromEntries(resources.map((t) => [t, schemaOf(pkg, t, "")])),
    data: Object.fromEntries(data.map((t) => [t, schemaOf(pkg, t, "data-google-")])),
  };
  writeFileSync(path.join(TERRAFORM_DIR, "schema/google-provider.json"), `${JSON.stringify(out, null, 2)}\n`);
  console.log(`${resources.length} resource types, ${data.length} data sources`);
}

main();
