import hljs from "#hljs/core";
import bash from "#hljs/languages/bash";
import css from "#hljs/languages/css";
import diff from "#hljs/languages/diff";
import dockerfile from "#hljs/languages/dockerfile";
import go from "#hljs/languages/go";
import ini from "#hljs/languages/ini";
import javascript from "#hljs/languages/javascript";
import json from "#hljs/languages/json";
import makefile from "#hljs/languages/makefile";
import markdown from "#hljs/languages/markdown";
import python from "#hljs/languages/python";
import rust from "#hljs/languages/rust";
import sql from "#hljs/languages/sql";
import typescript from "#hljs/languages/typescript";
import xml from "#hljs/languages/xml";
import yaml from "#hljs/languages/yaml";
import type { Language } from "./highlight.ts";

/**
 * highlight.js's core and the languages of highlight.ts, registered once. The module is imported
 * at the first web page (`highlighter` in highlight.ts) rather than at start: its code and the
 * languages' grammars are a fifth of what the server would otherwise load and keep for requests
 * that never show a page (docs/benchmarks.md, "Where the memory goes").
 */
const GRAMMARS: Record<Language, typeof bash> = {
  bash,
  css,
  diff,
  dockerfile,
  go,
  ini,
  javascript,
  json,
  makefile,
  markdown,
  python,
  rust,
  sql,
  typescript,
  xml,
  yaml,
};
for (const [name, grammar] of Object.entries(GRAMMARS)) hljs.registerLanguage(name, grammar);

/** highlight.js's markup of `text` as `language`: escaped text and `<span class="hljs-…">`. */
export function highlightMarkup(text: string, language: Language): string {
  return hljs.highlight(text, { language, ignoreIllegals: true }).value;
}
