/**
 * `if:` expressions of `.svc/ci.yaml` (docs/ci-config.md): comparisons of `event.*` fields and
 * quoted strings joined by `&&` and `||`, with parentheses. A small hand-written parser, so that
 * anything outside this grammar is refused with a message that names the position instead of
 * being half-understood.
 *
 *     or      := and ("||" and)*
 *     and     := term ("&&" term)*
 *     term    := "(" or ")" | operand ("==" | "!=") operand
 *     operand := field | string
 */

/** The fields an expression may read. */
export const ifFields = ["event.type", "event.branch", "event.base_branch", "event.proposal_id"] as const;
export type IfField = (typeof ifFields)[number];

export type IfOperand = { kind: "field"; field: IfField } | { kind: "string"; value: string };

/** A parsed expression. */
export type IfExpr =
  | { kind: "or" | "and"; left: IfExpr; right: IfExpr }
  | { kind: "compare"; op: "==" | "!="; left: IfOperand; right: IfOperand };

/** What an expression is evaluated against; `base_branch` and `proposal_id` are "" except for proposals. */
export interface IfEvent {
  type: string;
  branch: string;
  base_branch: string;
  proposal_id: string;
}

/** Longest expression accepted, and deepest nesting of parentheses (the parser recurses). */
export const MAX_IF_LENGTH = 4096;
const MAX_DEPTH = 32;

/** A syntax error; `index` is the 0-based offset in the expression, the message says it 1-based. */
export class IfSyntaxError extends Error {
  readonly index: number;

  constructor(what: string, index: number) {
    super(`at position ${index + 1}: ${what}`);
    this.name = "IfSyntaxError";
    this.index = index;
  }
}

type Token =
  | { kind: "(" | ")" | "&&" | "||" | "==" | "!=" | "end"; at: number }
  | { kind: "field"; field: IfField; at: number }
  | { kind: "string"; value: string; at: number };

const FIELD_LIST = ifFields.join(", ");

/**
 * Parses an expression. Empty (or only spaces) means "always run" and gives null.
 * @throws IfSyntaxError for anything outside the grammar.
 */
export function parseIf(source: string): IfExpr | null {
  if (source.length > MAX_IF_LENGTH) throw new IfSyntaxError(`longer than ${MAX_IF_LENGTH} characters`, 0);
  const tokens = tokenize(source);
  if (tokens.length === 1) return null;
  const parser = new Parser(tokens);
  const expr = parser.or(0);
  const rest = parser.peek();
  if (rest.kind !== "end") throw new IfSyntaxError(`unexpected ${describe(rest)}`, rest.at);
  return expr;
}

/** Whether `expr` holds for `event`; no expression (null) always holds. */
export function evaluateIf(expr: IfExpr | null, event: IfEvent): boolean {
  if (expr === null) return true;
  switch (expr.kind) {
    case "or":
      return evaluateIf(expr.left, event) || evaluateIf(expr.right, event);
    case "and":
      return evaluateIf(expr.left, event) && evaluateIf(expr.right, event);
    case "compare": {
      const equal = operandValue(expr.left, event) === operandValue(expr.right, event);
      return expr.op === "==" ? equal : !equal;
    }
  }
}

function operandValue(operand: IfOperand, event: IfEvent): string {
  if (operand.kind === "string") return operand.value;
  // A caller may leave the proposal fields undefined outside proposals; they read as "".
  return event[operand.field.slice("event.".length) as keyof IfEvent] ?? "";
}

class Parser {
  #tokens: Token[];
  #next = 0;

  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  peek(): Token {
    const token = this.#tokens[this.#next];
    // #take never moves past the `end` token tokenize always appends.
    if (token === undefined) throw new Error("the if: parser read past its end token");
    return token;
  }

  #take(): Token {
    const token = this.peek();
    if (token.kind !== "end") this.#next++;
    return token;
  }

  or(depth: number): IfExpr {
    let left = this.and(depth);
    while (this.peek().kind === "||") {
      this.#take();
      left = { kind: "or", left, right: this.and(depth) };
    }
    return left;
  }

  and(depth: number): IfExpr {
    let left = this.term(depth);
    while (this.peek().kind === "&&") {
      this.#take();
      left = { kind: "and", left, right: this.term(depth) };
    }
    return left;
  }

  term(depth: number): IfExpr {
    const token = this.peek();
    if (token.kind === "(") {
      if (depth >= MAX_DEPTH)
        throw new IfSyntaxError(`parentheses nested deeper than ${MAX_DEPTH}`, token.at);
      this.#take();
      const inner = this.or(depth + 1);
      const close = this.#take();
      if (close.kind !== ")") throw new IfSyntaxError(`expected ')' but found ${describe(close)}`, close.at);
      return inner;
    }
    const left = this.#operand("a comparison (field or quoted string) or '('");
    const op = this.#take();
    if (op.kind !== "==" && op.kind !== "!=")
      throw new IfSyntaxError(`expected '==' or '!=' but found ${describe(op)}`, op.at);
    return { kind: "compare", op: op.kind, left, right: this.#operand("a field or quoted string") };
  }

  #operand(expected: string): IfOperand {
    const token = this.#take();
    if (token.kind === "field") return { kind: "field", field: token.field };
    if (token.kind === "string") return { kind: "string", value: token.value };
    throw new IfSyntaxError(`expected ${expected} but found ${describe(token)}`, token.at);
  }
}

function describe(token: Token): string {
  switch (token.kind) {
    case "end":
      return "the end of the expression";
    case "field":
      return `'${token.field}'`;
    case "string":
      return `the string ${JSON.stringify(token.value)}`;
    default:
      return `'${token.kind}'`;
  }
}

/** The tokens of `source`, always ending with an `end` token. */
function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source.charAt(i);
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
    } else if (c === "(" || c === ")") {
      tokens.push({ kind: c, at: i++ });
    } else if (c === "'" || c === '"') {
      const { value, end } = readString(source, i);
      tokens.push({ kind: "string", value, at: i });
      i = end;
    } else if (/[A-Za-z_]/.test(c)) {
      const word = readWord(source, i);
      tokens.push({ kind: "field", field: fieldOf(word, i), at: i });
      i += word.length;
    } else {
      const op = operatorAt(source, i);
      tokens.push({ kind: op, at: i });
      i += op.length;
    }
  }
  tokens.push({ kind: "end", at: source.length });
  return tokens;
}

/** The run of field characters (letters, digits, `_` and `.`) starting at `i`. */
function readWord(source: string, i: number): string {
  let end = i;
  while (end < source.length && /[A-Za-z0-9_.]/.test(source.charAt(end))) end++;
  return source.slice(i, end);
}

function fieldOf(word: string, at: number): IfField {
  if ((ifFields as readonly string[]).includes(word)) return word as IfField;
  if (word.startsWith("event."))
    throw new IfSyntaxError(`unknown field '${word}' (the fields are ${FIELD_LIST})`, at);
  throw new IfSyntaxError(
    `unexpected word '${word}': write strings in quotes ('${word}') and fields as ${FIELD_LIST}`,
    at,
  );
}

/** The operator at `i`, or a syntax error that says what to write instead. */
function operatorAt(source: string, i: number): "&&" | "||" | "==" | "!=" {
  const two = source.slice(i, i + 2);
  const three = source.slice(i, i + 3);
  if (three === "===" || three === "!==")
    throw new IfSyntaxError(`'${three}' is not an operator; use '${three.slice(0, 2)}'`, i);
  if (two === "&&" || two === "||" || two === "==" || two === "!=") return two;
  const c = source.charAt(i);
  if (c === "!") throw new IfSyntaxError("'!' (negation) is not supported; compare with '!=' instead", i);
  if (c === "=") throw new IfSyntaxError("'=' is not an operator; use '=='", i);
  if (c === "&") throw new IfSyntaxError("'&' is not an operator; use '&&'", i);
  if (c === "|") throw new IfSyntaxError("'|' is not an operator; use '||'", i);
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the message quotes GitHub Actions' syntax.
  if (two === "${") throw new IfSyntaxError("'${{ ... }}' is not needed; write the expression bare", i);
  if (/[0-9]/.test(c)) throw new IfSyntaxError("numbers are not supported; quote them as strings", i);
  throw new IfSyntaxError(`unexpected character ${JSON.stringify(c)}`, i);
}

/** Reads the quoted string starting at `start`; only `\\`, `\'` and `\"` are escapes. */
function readString(source: string, start: number): { value: string; end: number } {
  const quote = source.charAt(start);
  let value = "";
  let i = start + 1;
  while (i < source.length) {
    const c = source.charAt(i);
    if (c === quote) return { value, end: i + 1 };
    if (c === "\\") {
      const next = source[i + 1];
      if (next !== "\\" && next !== "'" && next !== '"')
        throw new IfSyntaxError(
          next === undefined
            ? "unterminated string"
            : `unsupported escape '\\${next}' (only \\\\, \\' and \\" are escapes)`,
          next === undefined ? start : i,
        );
      value += next;
      i += 2;
    } else {
      value += c;
      i++;
    }
  }
  throw new IfSyntaxError("unterminated string", start);
}
