import { describe, expect, it } from "vitest";
import {
  evaluateIf,
  type IfEvent,
  type IfExpr,
  type IfOperand,
  IfSyntaxError,
  MAX_IF_LENGTH,
  parseIf,
} from "../../../shared/ci/config/expression.ts";

/** The expression fully parenthesized, so precedence is visible in the expectation. */
function show(expr: IfExpr | null): string {
  if (expr === null) return "<always>";
  if (expr.kind === "compare") return `${operand(expr.left)} ${expr.op} ${operand(expr.right)}`;
  return `(${show(expr.left)} ${expr.kind === "and" ? "&&" : "||"} ${show(expr.right)})`;
}

function operand(o: IfOperand): string {
  return o.kind === "field" ? o.field.slice("event.".length) : JSON.stringify(o.value);
}

function syntaxError(source: string): IfSyntaxError {
  try {
    parseIf(source);
  } catch (err) {
    expect(err).toBeInstanceOf(IfSyntaxError);
    return err as IfSyntaxError;
  }
  throw new Error(`expected ${JSON.stringify(source)} to be refused`);
}

const push: IfEvent = { type: "push", branch: "feature/a", base_branch: "", proposal_id: "" };
const proposal: IfEvent = {
  type: "proposal",
  branch: "feature/a",
  base_branch: "main",
  proposal_id: "0b5e4d4e-8a55-4a47-9bb8-5e4a2e0d1c11",
};

describe("parseIf: grammar", () => {
  it.each([
    ["", "<always>"],
    ["   \t ", "<always>"],
    ["event.type == 'push'", 'type == "push"'],
    ['event.branch != "main"', 'branch != "main"'],
    ["'main' == event.base_branch", '"main" == base_branch'],
    ["event.branch == event.base_branch", "branch == base_branch"],
    ["'a' == 'a'", '"a" == "a"'],
    ["event.proposal_id != ''", 'proposal_id != ""'],
    // && binds tighter than ||, both associate to the left
    [
      "event.type == 'a' || event.type == 'b' && event.branch == 'c'",
      '(type == "a" || (type == "b" && branch == "c"))',
    ],
    [
      "event.type == 'a' && event.type == 'b' || event.branch == 'c'",
      '((type == "a" && type == "b") || branch == "c")',
    ],
    [
      "event.type == 'a' || event.type == 'b' || event.type == 'c'",
      '((type == "a" || type == "b") || type == "c")',
    ],
    [
      "event.type == 'a' && event.type == 'b' && event.type == 'c'",
      '((type == "a" && type == "b") && type == "c")',
    ],
    // parentheses override precedence and may nest
    [
      "(event.type == 'a' || event.type == 'b') && event.branch == 'c'",
      '((type == "a" || type == "b") && branch == "c")',
    ],
    ["((event.type == 'a'))", 'type == "a"'],
    [
      "(event.type == 'a' && (event.branch == 'b' || (event.branch == 'c')))",
      '(type == "a" && (branch == "b" || branch == "c"))',
    ],
    // spacing is free, including none and newlines
    ["event.type=='push'&&event.branch!='main'", '(type == "push" && branch != "main")'],
    ["event.type == 'push'\n  && event.branch == 'main'", '(type == "push" && branch == "main")'],
  ])("%j parses as %s", (source, expected) => {
    expect(show(parseIf(source))).toBe(expected);
  });
});

describe("parseIf: string literals", () => {
  it.each([
    [`'single'`, "single"],
    [`"double"`, "double"],
    [`''`, ""],
    [`"it's"`, "it's"],
    [`'say "hi"'`, 'say "hi"'],
    [`'it\\'s'`, "it's"],
    [`"say \\"hi\\""`, 'say "hi"'],
    [`'back\\\\slash'`, "back\\slash"],
    [`"\\'"`, "'"],
    [`'a == b && c'`, "a == b && c"],
    [`'release/**'`, "release/**"],
  ])("%s is the string %j", (literal, value) => {
    const expr = parseIf(`event.branch == ${literal}`);
    expect(expr).toEqual({
      kind: "compare",
      op: "==",
      left: { kind: "field", field: "event.branch" },
      right: { kind: "string", value },
    });
  });
});

describe("parseIf: rejections name what is wrong and where", () => {
  it.each([
    // [source, message fragment, 1-based position]
    ["event.type", "expected '==' or '!=' but found the end of the expression", 11],
    ["'push'", "expected '==' or '!=' but found the end of the expression", 7],
    ["event.type == push", "unexpected word 'push': write strings in quotes ('push')", 15],
    ["branch == 'main'", "unexpected word 'branch'", 1],
    ["event.ref == 'main'", "unknown field 'event.ref' (the fields are event.type, event.branch", 1],
    ["event.Type == 'push'", "unknown field 'event.Type'", 1],
    ["github.ref == 'x'", "unexpected word 'github.ref'", 1],
    ["true", "unexpected word 'true'", 1],
    ["event.type == 1", "numbers are not supported; quote them as strings", 15],
    ["!(event.type == 'push')", "'!' (negation) is not supported; compare with '!=' instead", 1],
    ["event.type === 'push'", "'===' is not an operator; use '=='", 12],
    ["event.type !== 'push'", "'!==' is not an operator; use '!='", 12],
    ["event.type = 'push'", "'=' is not an operator; use '=='", 12],
    ["event.type == 'a' & event.branch == 'b'", "'&' is not an operator; use '&&'", 19],
    ["event.type == 'a' | event.branch == 'b'", "'|' is not an operator; use '||'", 19],
    ["event.type < 'a'", `unexpected character "<"`, 12],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: GitHub Actions' syntax, refused.
    ["${{ event.type == 'push' }}", "'${{ ... }}' is not needed; write the expression bare", 1],
    ["event.type == 'push", "unterminated string", 15],
    ['event.type == "push\\"', "unterminated string", 15],
    ["event.type == 'push\\", "unterminated string", 15],
    ["event.type == 'a\\nb'", "unsupported escape '\\n' (only \\\\, \\' and \\\" are escapes)", 17],
    ["event.type == 'a' event.branch == 'b'", "unexpected 'event.branch'", 19],
    ["event.type == 'a')", "unexpected ')'", 18],
    ["event.type == 'a' == 'b'", "unexpected '=='", 19],
    ["(event.type == 'a'", "expected ')' but found the end of the expression", 19],
    ["()", "expected a comparison (field or quoted string) or '(' but found ')'", 2],
    ["(event.type) == 'a'", "expected '==' or '!=' but found ')'", 12],
    ["event.type == 'a' &&", "expected a comparison (field or quoted string) or '(' but found the end", 21],
    ["|| event.type == 'a'", "expected a comparison (field or quoted string) or '(' but found '||'", 1],
    ["event.type == 'a' && || event.branch == 'b'", "but found '||'", 22],
    ["event.type == && 'a'", "expected a field or quoted string but found '&&'", 15],
    ["event.type == ('a')", "expected a field or quoted string but found '('", 15],
  ])("%j: %s (position %i)", (source, fragment, position) => {
    const err = syntaxError(source);
    expect(err.message).toContain(fragment);
    expect(err.message).toMatch(new RegExp(`^at position ${position}: `));
    expect(err.index).toBe(position - 1);
  });

  it("refuses expressions longer than the limit and nesting deeper than 32", () => {
    expect(syntaxError(`event.type == '${"x".repeat(MAX_IF_LENGTH)}'`).message).toContain(
      `longer than ${MAX_IF_LENGTH} characters`,
    );
    expect(parseIf(`${"(".repeat(32)}event.type == 'a'${")".repeat(32)}`)).not.toBeNull();
    const deep = `${"(".repeat(33)}event.type == 'a'${")".repeat(33)}`;
    expect(syntaxError(deep).message).toBe("at position 33: parentheses nested deeper than 32");
    // a stack overflow would not be a clear message
    expect(syntaxError("(".repeat(100_000).slice(0, MAX_IF_LENGTH)).message).toContain("nested deeper");
  });
});

describe("evaluateIf", () => {
  it.each([
    ["", push, true],
    ["event.type == 'push'", push, true],
    ["event.type == 'push'", proposal, false],
    ["event.type != 'push'", proposal, true],
    ["event.branch == 'feature/a'", push, true],
    ["event.base_branch == ''", push, true],
    ["event.base_branch == 'main'", proposal, true],
    ["event.proposal_id != ''", proposal, true],
    ["event.proposal_id == ''", push, true],
    ["event.type == 'push' || event.type == 'proposal'", proposal, true],
    ["event.type == 'push' && event.branch == 'main'", push, false],
    // precedence: true || (false && false) is true; (true || false) && false is false
    ["event.type == 'push' || event.type == 'x' && event.type == 'y'", push, true],
    ["(event.type == 'push' || event.type == 'x') && event.type == 'y'", push, false],
    ["event.branch == event.base_branch", { ...push, branch: "main", base_branch: "main" }, true],
    ["'a' != 'b'", push, true],
    // comparison is exact: no globbing, no case folding
    ["event.branch == 'feature/*'", push, false],
    ["event.type == 'PUSH'", push, false],
  ] as const)("%j for %o is %s", (source, event, expected) => {
    expect(evaluateIf(parseIf(source), event)).toBe(expected);
  });

  it("reads a missing proposal field as the empty string", () => {
    const event = { type: "push", branch: "main" } as unknown as IfEvent;
    expect(evaluateIf(parseIf("event.base_branch == '' && event.proposal_id == ''"), event)).toBe(true);
  });

  it("treats no expression (null) as always true", () => {
    expect(evaluateIf(null, push)).toBe(true);
  });
});
