/** Issue lists: the page the CLI and the web ask for, and the largest a client may ask for (docs/issues.md). */
export const ISSUE_PAGE = 50;
export const MAX_ISSUE_PAGE = 200;
