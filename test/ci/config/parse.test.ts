import { describe, expect, it } from "vitest";
import { type ConfigError, describeConfigErrors, MAX_CONFIG_BYTES } from "../../../shared/ci/config/file.ts";
import { parseCiConfig } from "../../../shared/ci/config/parse.ts";
import { type CiConfig, type CiOn, MAX_CHECKS, MAX_SCHEDULES } from "../../../shared/ci/config/schema.ts";

/** Joins lines, so that a test's YAML reads with its line numbers obvious. */
const yaml = (...lines: string[]) => `${lines.join("\n")}\n`;

const CHECK = ["checks:", "  - name: lint", "    image: node:24", "    steps: [npm run lint]"];

function config(text: string): CiConfig {
  const result = parseCiConfig(text);
  if (!result.ok) throw new Error(`expected a valid file, got:\n${describeConfigErrors(result.errors)}`);
  return result.config;
}

function errors(text: string): ConfigError[] {
  const result = parseCiConfig(text);
  if (result.ok) throw new Error("expected the file to be refused");
  return result.errors;
}

/** The one error of a file, as `line:column message`. */
function oneError(text: string): string {
  const all = errors(text);
  expect(all, describeConfigErrors(all)).toHaveLength(1);
  const [e] = all;
  return `${e!.line}:${e!.column} ${e!.message}`;
}

describe("a valid file", () => {
  it("reads every field", () => {
    const c = config(
      yaml(
        "on:",
        "  push:",
        "    branches: [main, 'release/**']",
        "  proposal:",
        "    base_branches: [main]",
        "  schedule:",
        "    - cron: '0 3 * * *'",
        "    - cron: '*/30 * * * 1-5'",
        "  manual:",
        "checks:",
        "  - name: quire/lint",
        "    image: node:24",
        "    steps:",
        "      - npm ci",
        "      - npm run lint",
        "  - name: quire/test",
        "    image: node:24",
        "    steps: [npm test]",
        "    if: event.type != 'schedule' && (event.branch == 'main' || event.base_branch == 'main')",
        "    needs: [quire/lint]",
        "    secrets: [NPM_TOKEN, _DEPLOY_KEY_2]",
      ),
    );
    expect(c.on).toEqual({
      push: { branches: ["main", "release/**"] },
      proposal: { base_branches: ["main"] },
      schedule: [{ cron: "0 3 * * *" }, { cron: "*/30 * * * 1-5" }],
      manual: true,
    });
    expect(c.checks.map(({ condition, ...rest }) => rest)).toEqual([
      {
        name: "quire/lint",
        image: "node:24",
        steps: ["npm ci", "npm run lint"],
        if: "",
        needs: [],
        secrets: [],
      },
      {
        name: "quire/test",
        image: "node:24",
        steps: ["npm test"],
        if: "event.type != 'schedule' && (event.branch == 'main' || event.base_branch == 'main')",
        needs: ["quire/lint"],
        secrets: ["NPM_TOKEN", "_DEPLOY_KEY_2"],
      },
    ]);
    expect(c.checks[0]!.condition).toBeNull();
    expect(c.checks[1]!.condition?.kind).toBe("and");
  });

  /** The `on` block with only `parts` configured (manual is always on). */
  const only = (parts: Partial<CiOn>): CiOn => ({
    push: null,
    proposal: null,
    schedule: [],
    manual: true,
    ...parts,
  });
  const every = { branches: [] };

  it.each([
    ["no `on` block: push on every branch (backward compatibility)", [], only({ push: every })],
    ["`on:` with nothing: only manual runs", ["on:"], only({})],
    ["`on: {}`: only manual runs", ["on: {}"], only({})],
    ["`push:` with nothing: every branch", ["on:", "  push:"], only({ push: every })],
    ["`push: {branches: []}`: every branch", ["on:", "  push: {branches: []}"], only({ push: every })],
    ["`branches:` with nothing: every branch", ["on:", "  push:", "    branches:"], only({ push: every })],
    [
      "`proposal:` with nothing: every base branch",
      ["on:", "  proposal:"],
      only({ proposal: { base_branches: [] } }),
    ],
    [
      "`proposal: {}`: every base branch",
      ["on:", "  proposal: {}"],
      only({ proposal: { base_branches: [] } }),
    ],
    [
      "`base_branches: []`: every base branch",
      ["on:", "  proposal: {base_branches: []}"],
      only({ proposal: { base_branches: [] } }),
    ],
    [
      "only a schedule",
      ["on:", "  schedule: [{cron: '0 0 * * *'}]"],
      only({ schedule: [{ cron: "0 0 * * *" }] }),
    ],
    ["`schedule: []`", ["on:", "  schedule: []"], only({})],
    ["`manual: true`", ["on:", "  manual: true"], only({})],
    ["`manual: {}`", ["on:", "  manual: {}"], only({})],
  ] as [string, string[], CiOn][])("%s", (_, on, expected) => {
    expect(config(yaml(...on, ...CHECK)).on).toEqual(expected);
  });

  it.each([
    ["absent", [], ""],
    ["empty", ["    if:"], ""],
    ["an empty string", ["    if: ''"], ""],
  ])("a check whose `if` is %s always runs", (_, extra, source) => {
    const [check] = config(yaml(...CHECK, ...extra)).checks;
    expect(check!.if).toBe(source);
    expect(check!.condition).toBeNull();
  });

  it("takes `needs:` with nothing as no needs, in any order", () => {
    const c = config(
      yaml(
        "checks:",
        "  - {name: b, image: x, steps: [s], needs: [a]}",
        "  - {name: a, image: x, steps: [s], needs:}",
      ),
    );
    expect(c.checks.map((ch) => ch.needs)).toEqual([["a"], []]);
  });

  it("resolves anchors, aliases and merge keys", () => {
    const c = config(
      yaml(
        "checks:",
        "  - &base",
        "    name: lint",
        "    image: node:24",
        "    steps: &steps [npm ci, npm run lint]",
        "  - <<: *base",
        "    name: test",
        "    steps: *steps",
      ),
    );
    expect(c.checks.map((ch) => [ch.name, ch.image, ch.steps])).toEqual([
      ["lint", "node:24", ["npm ci", "npm run lint"]],
      ["test", "node:24", ["npm ci", "npm run lint"]],
    ]);
  });

  it("keeps multi-line steps as written and accepts comments and quoting styles", () => {
    const c = config(
      yaml(
        "# CI for this repo",
        "checks:",
        "  - name: build # the main one",
        '    image: "ghcr.io/acme/builder@sha256:0123"',
        "    steps:",
        "      - |",
        "        set -e",
        "        make all",
        "      - 'echo \"done: yes\"'",
      ),
    );
    expect(c.checks[0]!.image).toBe("ghcr.io/acme/builder@sha256:0123");
    expect(c.checks[0]!.steps).toEqual(["set -e\nmake all\n", 'echo "done: yes"']);
  });

  it("takes an expression quoted as a whole or written as a block scalar", () => {
    const c = config(
      yaml(
        ...CHECK,
        "    if: \"'main' == event.base_branch\"",
        "  - name: b",
        "    image: x",
        "    steps: [s]",
        "    if: >",
        "      event.type == 'push' &&",
        "      event.branch == 'main'",
      ),
    );
    expect(c.checks.map((ch) => ch.condition?.kind)).toEqual(["compare", "and"]);
  });

  it("reads `on` as a key under YAML 1.2, not as the boolean true", () => {
    expect(config(yaml("on:", "  proposal:", ...CHECK)).on.proposal).toEqual({ base_branches: [] });
  });
});

describe("YAML syntax errors carry line and column", () => {
  it.each([
    [
      "an unclosed flow list",
      yaml("checks: [a, b"),
      /^2:1 YAML: Flow sequence in block collection must be sufficiently indented and end with a \]/,
    ],
    ["a duplicate key", yaml(...CHECK, "checks: []"), /^5:1 YAML: Map keys must be unique/],
    [
      "an unterminated quote",
      yaml("checks:", "  - name: 'lint", "    image: x"),
      /^\d+:\d+ YAML: Missing closing 'quote/,
    ],
    ["a tab as indentation", yaml("checks:", "\t- name: x"), /^2:1 YAML: Tabs are not allowed/],
    ["bad indentation", yaml("checks:", "  - name: a", " image: x"), /^3:\d+ YAML: /],
    ["a nested mapping in a compact one", yaml("on: push: x", ...CHECK), /^1:5 YAML: Nested mappings/],
    ["two documents", yaml(...CHECK, "---", ...CHECK), /^5:1 YAML: Source contains multiple documents/],
    ["an unknown tag", yaml("checks:", "  - name: !secret lint"), /^2:11 YAML: Unresolved tag: !secret/],
  ])("%s", (_, text, expected) => {
    expect(oneError(text)).toMatch(expected);
  });

  it("refuses a file past the size limit before parsing", () => {
    expect(errors(`# ${"x".repeat(MAX_CONFIG_BYTES)}\n`)).toEqual([
      { message: `the file is larger than ${MAX_CONFIG_BYTES} bytes` },
    ]);
  });

  it("refuses an alias bomb", () => {
    const lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 8; i++)
      lines.push(
        `${"abcdefgh"[i]}: &${"abcdefgh"[i]} [${Array(10)
          .fill(`*${"abcdefgh"[i - 1]}`)
          .join(", ")}]`,
      );
    expect(oneError(yaml(...lines, ...CHECK))).toMatch(/the file cannot be read: .*alias/i);
  });
});

describe("schema errors point at the offending node", () => {
  it.each([
    // [what, file, "line:column message"]
    ["an empty file", "", "1:1 the file is empty: it needs a 'checks' list"],
    ["only a comment", "# nothing yet\n", "1:1 the file is empty: it needs a 'checks' list"],
    [
      "a list at the top",
      yaml("- lint"),
      "1:1 the file: must be a mapping with 'checks' (and optionally 'on'), not a list",
    ],
    [
      "a string at the top",
      yaml("lint"),
      "1:1 the file: must be a mapping with 'checks' (and optionally 'on'), not a string",
    ],
    ["no checks", yaml("on:", "  push:"), "1:1 checks: is required"],
    ["checks: []", yaml("checks: []"), "1:9 checks: must list at least one check"],
    [
      "checks not a list",
      yaml("checks:", "  lint: {}"),
      "2:3 checks: must be a list of checks, not a mapping",
    ],
    [
      "a check that is a string",
      yaml("checks:", "  - lint"),
      "2:5 checks[0]: must be a mapping with name, image and steps, not a string",
    ],
    ["missing steps", yaml("checks:", "  - name: lint", "    image: x"), "2:5 checks[0].steps: is required"],
    ["missing name", yaml("checks:", "  - image: x", "    steps: [s]"), "2:5 checks[0].name: is required"],
    [
      "empty steps",
      yaml("checks:", "  - name: a", "    image: x", "    steps: []"),
      "4:12 checks[0].steps: must list at least one step",
    ],
    [
      "steps as a string",
      yaml("checks:", "  - name: a", "    image: x", "    steps: make"),
      "4:12 checks[0].steps: must be a list of shell commands, not a string",
    ],
    [
      "a step that is a number",
      yaml("checks:", "  - name: a", "    image: x", "    steps: [make, 42]"),
      "4:19 checks[0].steps[1]: must be a string, not the number 42",
    ],
    [
      "an empty step",
      yaml("checks:", "  - name: a", "    image: x", "    steps: ['  ']"),
      "4:13 checks[0].steps[0]: must not be empty",
    ],
    [
      "a null step",
      yaml("checks:", "  - name: a", "    image: x", "    steps:", "      -"),
      "5:8 checks[0].steps[0]: must be a string, not empty (null)",
    ],
    [
      "an empty image",
      yaml("checks:", "  - name: a", "    image: ''", "    steps: [s]"),
      "3:12 checks[0].image: must not be empty",
    ],
    [
      "an image with spaces",
      yaml("checks:", "  - name: a", "    image: node 24", "    steps: [s]"),
      "3:12 checks[0].image: must not contain spaces",
    ],
    [
      "an image that is a number",
      yaml("checks:", "  - name: a", "    image: 3", "    steps: [s]"),
      "3:12 checks[0].image: must be a string, not the number 3",
    ],
    [
      "a name with a space",
      yaml("checks:", "  - name: my lint", "    image: x", "    steps: [s]"),
      "2:11 checks[0].name: must use only letters, digits, '.', '_', '-' and '/'",
    ],
    [
      "a name with a leading slash",
      yaml("checks:", "  - name: /lint", "    image: x", "    steps: [s]"),
      "2:11 checks[0].name: must not start with '/'",
    ],
    [
      "a name with a trailing slash",
      yaml("checks:", "  - name: ci/", "    image: x", "    steps: [s]"),
      "2:11 checks[0].name: must not contain empty segments ('//' or a trailing '/')",
    ],
    [
      "a name with //",
      yaml("checks:", "  - name: ci//lint", "    image: x", "    steps: [s]"),
      "2:11 checks[0].name: must not contain empty segments ('//' or a trailing '/')",
    ],
    [
      "a name too long",
      yaml("checks:", `  - name: ${"a".repeat(201)}`, "    image: x", "    steps: [s]"),
      "2:11 checks[0].name: must be at most 200 characters",
    ],
    [
      "a name that is a number",
      yaml("checks:", "  - name: 7", "    image: x", "    steps: [s]"),
      "2:11 checks[0].name: must be a string, not the number 7",
    ],
    [
      "`if` that is a boolean",
      yaml(...CHECK, "    if: true"),
      "5:9 checks[0].if: must be a string, not the boolean true",
    ],
    [
      "`needs` that is a string",
      yaml(...CHECK, "    needs: lint"),
      "5:12 checks[0].needs: must be a list of check names, not a string",
    ],
    ["`on` that is a list", yaml("on: [push]", ...CHECK), "1:5 on: must be a mapping, not a list"],
    [
      "`on.push` that is a list",
      yaml("on:", "  push: [main]", ...CHECK),
      "2:9 on.push: must be a mapping, not a list",
    ],
    [
      "branches as a string",
      yaml("on:", "  push:", "    branches: main", ...CHECK),
      "3:15 on.push.branches: must be a list of branch patterns, not a string",
    ],
    [
      "a branch pattern that is a number",
      yaml("on:", "  push:", "    branches: [1]", ...CHECK),
      "3:16 on.push.branches[0]: must be a branch pattern string, not the number 1",
    ],
    [
      "a negated branch pattern",
      yaml("on:", "  push:", "    branches: ['!main']", ...CHECK),
      "3:16 on.push.branches[0]: must not start with '!': negation is not supported, list the branches to run on",
    ],
    [
      "a brace pattern",
      yaml("on:", "  proposal:", "    base_branches: ['{main,dev}']", ...CHECK),
      "3:21 on.proposal.base_branches[0]: must not contain '{' or '}': brace expansion is not supported, list each pattern",
    ],
    [
      "an unterminated class",
      yaml("on:", "  push:", "    branches: ['v[12']", ...CHECK),
      "3:16 on.push.branches[0]: has an unterminated character class '[' at position 2",
    ],
    [
      "schedule not a list",
      yaml("on:", "  schedule:", "    cron: '* * * * *'", ...CHECK),
      "3:5 on.schedule: must be a list of {cron: ...} entries, not a mapping",
    ],
    [
      "schedule: (empty)",
      yaml("on:", "  schedule:", ...CHECK),
      "2:12 on.schedule: must be a list of {cron: ...} entries, not empty (null)",
    ],
    [
      "a schedule entry without cron",
      yaml("on:", "  schedule:", "    - {}", ...CHECK),
      "3:7 on.schedule[0].cron: is required",
    ],
    [
      "a schedule entry as a string",
      yaml("on:", "  schedule:", "    - '0 0 * * *'", ...CHECK),
      "3:7 on.schedule[0]: must be a mapping with 'cron', not a string",
    ],
    [
      "a 6-field cron",
      yaml("on:", "  schedule:", "    - cron: '0 0 0 * * *'", ...CHECK),
      "3:13 on.schedule[0].cron: must have exactly 5 fields (minute hour day-of-month month day-of-week), found 6",
    ],
    [
      "a cron macro",
      yaml("on:", "  schedule:", "    - cron: '@daily'", ...CHECK),
      "3:13 on.schedule[0].cron: '@daily' macros are not supported; write the 5 fields (for example '0 0 * * *' for daily)",
    ],
    [
      "a cron out of range",
      yaml("on:", "  schedule:", "    - cron: '60 * * * *'", ...CHECK),
      "3:13 on.schedule[0].cron: is not a valid cron expression: Constraint error, got value 60 expected range 0-59",
    ],
    [
      "manual: false",
      yaml("on:", "  manual: false", ...CHECK),
      "2:11 on.manual: takes no configuration (manual runs are always enabled); write 'manual:' or leave it out",
    ],
    [
      "a secret name in lower case",
      yaml("checks:", "  - name: lint", "    image: x", "    steps: [s]", "    secrets: [npm_token]"),
      "5:15 checks[0].secrets[0]: must look like an environment variable: A-Z, 0-9 and _, not starting with a digit (e.g. DEPLOY_TOKEN)",
    ],
    [
      "a secret named twice",
      yaml("checks:", "  - name: lint", "    image: x", "    steps: [s]", "    secrets: [A, A]"),
      "5:14 checks[0].secrets: must not name a secret twice",
    ],
    [
      "manual with settings",
      yaml("on:", "  manual: {inputs: x}", ...CHECK),
      "2:11 on.manual: takes no configuration (manual runs are always enabled); write 'manual:' or leave it out",
    ],
  ])("%s", (_, text, expected) => {
    expect(oneError(text)).toBe(expected);
  });
});

describe("unknown keys are refused at the key, with a suggestion", () => {
  it.each([
    [
      "step: instead of steps:",
      yaml("checks:", "  - name: a", "    image: x", "    step: [s]"),
      [
        "2:5 checks[0].steps: is required",
        "4:5 checks[0]: unknown key 'step'; did you mean 'steps'? (allowed: name, image, steps, if, needs, secrets)",
      ],
    ],
    [
      "a misspelt top-level key",
      yaml("chekcs:", "  - {name: a, image: x, steps: [s]}"),
      [
        "1:1 checks: is required",
        "1:1 the file: unknown key 'chekcs'; did you mean 'checks'? (allowed: on, checks)",
      ],
    ],
    [
      "an unrelated key",
      yaml(...CHECK, "    timeout: 10"),
      ["5:5 checks[0]: unknown key 'timeout' (allowed: name, image, steps, if, needs, secrets)"],
    ],
    [
      "pull_request instead of proposal",
      yaml("on:", "  pull_request:", ...CHECK),
      [
        "2:3 on: unknown key 'pull_request'; did you mean 'proposal'? (allowed: push, proposal, schedule, manual)",
      ],
    ],
    [
      "branch instead of branches",
      yaml("on:", "  push:", "    branch: [main]", ...CHECK),
      ["3:5 on.push: unknown key 'branch'; did you mean 'branches'? (allowed: branches)"],
    ],
    [
      "branches under proposal",
      yaml("on:", "  proposal:", "    branches: [main]", ...CHECK),
      ["3:5 on.proposal: unknown key 'branches'; did you mean 'base_branches'? (allowed: base_branches)"],
    ],
    [
      "a schedule key other than cron",
      yaml("on:", "  schedule:", "    - cron: '0 0 * * *'", "      tz: Europe/Paris", ...CHECK),
      ["4:7 on.schedule[0]: unknown key 'tz' (allowed: cron)"],
    ],
    [
      "two unknown keys",
      yaml(...CHECK, "    runs-on: linux", "    env: {A: b}"),
      [
        "5:5 checks[0]: unknown key 'runs-on' (allowed: name, image, steps, if, needs, secrets)",
        "6:5 checks[0]: unknown key 'env' (allowed: name, image, steps, if, needs, secrets)",
      ],
    ],
    [
      "`on` read as true under a %YAML 1.1 directive",
      yaml("%YAML 1.1", "---", "on:", "  push:", ...CHECK),
      ["3:1 the file: unknown key 'true'; did you mean 'on'? (allowed: on, checks)"],
    ],
  ])("%s", (_, text, expected) => {
    expect(errors(text).map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual(expected);
  });
});

describe("rules across checks", () => {
  it.each([
    [
      "a duplicate name",
      yaml(
        "checks:",
        "  - {name: a, image: x, steps: [s]}",
        "  - {name: b, image: x, steps: [s]}",
        "  - {name: a, image: x, steps: [s]}",
      ),
      ["4:12 checks[2].name: duplicate check name 'a' (also checks[0])"],
    ],
    [
      "needs naming no check",
      yaml(
        "checks:",
        "  - {name: a, image: x, steps: [s], needs: [b, c]}",
        "  - {name: b, image: x, steps: [s]}",
      ),
      ["2:48 checks[0].needs[1]: names no check in this file: 'c'"],
    ],
    [
      "a check needing itself",
      yaml("checks:", "  - {name: a, image: x, steps: [s], needs: [a]}"),
      ["2:45 checks[0].needs[0]: a check cannot need itself"],
    ],
    [
      "a cycle",
      yaml(
        "checks:",
        "  - {name: a, image: x, steps: [s], needs: [c]}",
        "  - {name: b, image: x, steps: [s], needs: [a]}",
        "  - {name: c, image: x, steps: [s], needs: [b]}",
      ),
      ["2:44 checks[0].needs: needs form a cycle: a -> c -> b -> a"],
    ],
  ])("%s", (_, text, expected) => {
    expect(errors(text).map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual(expected);
  });

  it("reports cross-check problems alongside type errors, in file order", () => {
    const found = errors(
      yaml(
        "checks:",
        "  - name: a",
        "    image: 5",
        "    steps: [s]",
        "    needs: [ghost]",
        "  - name: a",
        "    image: x",
      ),
    );
    expect(found.map((e) => `${e.line}:${e.column} ${e.message}`)).toEqual([
      "3:12 checks[0].image: must be a string, not the number 5",
      "5:13 checks[0].needs[0]: names no check in this file: 'ghost'",
      "6:5 checks[1].steps: is required",
      "6:11 checks[1].name: duplicate check name 'a' (also checks[0])",
    ]);
  });
});

describe("`if:` errors are configuration errors pointing into the expression", () => {
  it.each([
    [
      "plain",
      "    if: event.type = 'push'",
      "5:20 checks[0].if: at position 12: '=' is not an operator; use '=='",
    ],
    [
      "double-quoted",
      '    if: "event.type == push"',
      "5:24 checks[0].if: at position 15: unexpected word 'push'",
    ],
    [
      "single-quoted",
      "    if: 'event.type == \"push\" &&'",
      "5:33 checks[0].if: at position 24: expected a comparison",
    ],
    [
      "an unknown field",
      "    if: event.ref == 'main'",
      "5:9 checks[0].if: at position 1: unknown field 'event.ref'",
    ],
    // escapes make the text differ from the value, so the error points at the scalar
    [
      "with a YAML escape",
      '    if: "event.type == \\u0070ush"',
      "5:9 checks[0].if: at position 15: unexpected word 'push'",
    ],
    [
      "a block scalar",
      "    if: >\n      event.type ==",
      "5:9 checks[0].if: at position 15: expected a field or quoted string",
    ],
  ])("%s", (_, line, expected) => {
    expect(oneError(yaml(...CHECK, ...line.split("\n")))).toMatch(
      new RegExp(`^${expected.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
    );
  });
});

describe("limits", () => {
  const checks = (n: number) => [
    "checks:",
    ...Array.from({ length: n }, (_, i) => `  - {name: c${i}, image: x, steps: [s]}`),
  ];
  const schedules = (n: number) => [
    "on:",
    "  schedule:",
    ...Array.from({ length: n }, () => "    - cron: '0 0 * * *'"),
  ];

  it.each([
    ["100 checks", checks(MAX_CHECKS), null],
    ["101 checks", checks(MAX_CHECKS + 1), "2:3 checks: must have at most 100 checks"],
    ["20 schedules", [...schedules(MAX_SCHEDULES), ...CHECK], null],
    [
      "21 schedules",
      [...schedules(MAX_SCHEDULES + 1), ...CHECK],
      "3:5 on.schedule: must have at most 20 entries",
    ],
  ] as const)("%s", (_, lines, expected) => {
    const result = parseCiConfig(yaml(...lines));
    if (expected === null) expect(result.ok).toBe(true);
    else expect(oneError(yaml(...lines))).toBe(expected);
  });
});

describe("describeConfigErrors", () => {
  it("renders one path:line:column line per error for the failed check run's log", () => {
    const text = describeConfigErrors([
      { message: "checks[0].steps: is required", line: 2, column: 5 },
      { message: "the file is larger than 262144 bytes" },
    ]);
    expect(text).toBe(
      ".svc/ci.yaml:2:5: checks[0].steps: is required\n.svc/ci.yaml: the file is larger than 262144 bytes",
    );
  });
});
