import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export const TERRAFORM_DIR = path.resolve(import.meta.dirname, "../../../terraform");

/** Parsed HCL: untyped JSON, checked field by field. */
export type Body = Record<string, any>;

/** Every .tf file of terraform/, parsed with @cdktf/hcl2json and merged by block kind. */
export interface Terraform {
  files: Record<string, Body>;
  /** `resource.<type>.<name>` → its one body. */
  resources: Record<string, Record<string, Body>>;
  data: Record<string, Record<string, Body>>;
  locals: Body;
  variables: Record<string, Body>;
  outputs: Record<string, Body>;
}

/**
 * @cdktf/hcl2json's declarations pull in the DOM lib (`/// <reference lib="dom" />`), which would
 * change Node's fetch types for the whole program; a specifier TypeScript cannot see keeps them out.
 */
const HCL2JSON = "@cdktf/hcl2json";

async function parseHcl(name: string, text: string): Promise<Body> {
  const { parse } = (await import(HCL2JSON)) as { parse(name: string, text: string): Promise<Body> };
  return parse(name, text);
}

export async function loadTerraform(): Promise<Terraform> {
  const tf: Terraform = { files: {}, resources: {}, data: {}, locals: {}, variables: {}, outputs: {} };
  const names = readdirSync(TERRAFORM_DIR).filter((f) => f.endsWith(".tf"));
  for (const name of names) {
    const parsed = await parseHcl(name, readFileSync(path.join(TERRAFORM_DIR, name), "utf8"));
    tf.files[name] = parsed;
    mergeLabelled(tf.resources, parsed["resource"], `${name} resource`);
    mergeLabelled(tf.data, parsed["data"], `${name} data`);
    for (const block of parsed["locals"] ?? []) mergeUnique(tf.locals, block, `${name} locals`);
    for (const [k, v] of Object.entries(parsed["variable"] ?? {}))
      mergeUnique(tf.variables, { [k]: single(v) }, name);
    for (const [k, v] of Object.entries(parsed["output"] ?? {}))
      mergeUnique(tf.outputs, { [k]: single(v) }, name);
  }
  return tf;
}

function single(v: unknown): Body {
  if (!Array.isArray(v) || v.length !== 1) throw new Error("expected exactly one block");
  return v[0] as Body;
}

function mergeLabelled(into: Record<string, Record<string, Body>>, blocks: Body | undefined, where: string) {
  for (const [type, byName] of Object.entries(blocks ?? {}))
    for (const [name, bodies] of Object.entries(byName as Body)) {
      into[type] ??= {};
      mergeUnique(into[type], { [name]: single(bodies) }, `${where} ${type}`);
    }
}

function mergeUnique(into: Body, from: Body, where: string) {
  for (const [k, v] of Object.entries(from)) {
    if (k in into) throw new Error(`${where}: ${k} is declared twice`);
    into[k] = v;
  }
}

/** The resource body, or an error naming what is missing. */
export function resource(tf: Terraform, type: string, name: string): Body {
  const body = tf.resources[type]?.[name];
  if (!body) throw new Error(`terraform/ has no resource ${type}.${name}`);
  return body;
}

/** A Terraform interpolation as hcl2json writes it: `expr("var.x")` is "${var.x}". */
export const expr = (e: string): string => `\${${e}}`;

/** `${a.b["key"].c}` → ["a", "b", "key", "c"]; anything that is not one plain reference → null. */
export function referenceParts(expression: unknown): string[] | null {
  if (typeof expression !== "string") return null;
  const m = /^\$\{([\w.[\]"-]+)\}$/.exec(expression);
  if (!m) return null;
  return (m[1] as string)
    .replace(/\["([^"]+)"\]/g, ".$1")
    .replace(/\[(\w+)\]/g, ".$1")
    .split(".");
}
