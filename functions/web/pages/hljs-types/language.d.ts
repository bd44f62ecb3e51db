/** A highlight.js language definition, opaque here (see core.d.ts for why these types exist). */
export type LanguageFn = (hljs: unknown) => object;

declare const language: LanguageFn;
export default language;
