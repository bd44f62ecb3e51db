/**
 * The part of highlight.js's API this service uses. The package's own types start with
 * `/// <reference lib="dom" />`, which would lay the DOM's `fetch` and `BodyInit` types over
 * Node's in the whole program; tsconfig.json's `paths` points its imports here instead. Only
 * types change: at run time Node resolves the package's own exports.
 */
import type { LanguageFn } from "./language.d.ts";

interface HighlightApi {
  registerLanguage(name: string, language: LanguageFn): void;
  highlight(
    code: string,
    options: { language: string; ignoreIllegals?: boolean },
  ): { value: string; language?: string; relevance: number };
}

declare const hljs: HighlightApi;
export default hljs;
