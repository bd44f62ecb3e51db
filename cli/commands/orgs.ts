import type { Command } from "commander";
import type { CliEnv } from "../env.ts";
import type { Column } from "../output.ts";
import { resource } from "./resource.ts";

interface Org {
  name: string;
  created_at: string;
  created_by: string;
}
interface Member {
  identity: string;
  role: string;
  added_at: string;
  added_by: string;
}
interface Invite {
  id: string;
  email: string;
  role: string;
  expires_at: string;
  created_by: string;
  token?: string;
}

const ORG: Column<Org>[] = [
  { header: "name", value: (o) => o.name },
  { header: "created", value: (o) => o.created_at, kind: "time" },
  { header: "by", value: (o) => o.created_by },
];
const MEMBER: Column<Member>[] = [
  { header: "identity", value: (m) => m.identity },
  { header: "role", value: (m) => m.role },
  { header: "added", value: (m) => m.added_at, kind: "time" },
  { header: "by", value: (m) => m.added_by },
];
const INVITE: Column<Invite>[] = [
  { header: "id", value: (i) => i.id },
  { header: "email", value: (i) => i.email },
  { header: "role", value: (i) => i.role },
  { header: "expires", value: (i) => i.expires_at, kind: "time" },
  { header: "by", value: (i) => i.created_by },
];
const ROLE = ["owner", "member"] as const;

/** `quire orgs`, `quire members`, `quire invites`. */
export function register(program: Command, env: CliEnv): void {
  resource(program, env, {
    name: "orgs",
    aliases: ["org"],
    summary: "organizations: the owners of repos",
    verbs: [
      {
        name: "list",
        aliases: ["ls"],
        summary: "the orgs you belong to",
        run: async ({ client, out }) => out.table((await (await client()).get("/orgs")).orgs, ORG),
      },
      {
        name: "view <org>",
        summary: "one org",
        run: async ({ client, out, args: [org = ""] }) =>
          out.record(await (await client()).get("/orgs/:org", { params: { org } }), ORG),
      },
      {
        name: "create <org>",
        summary: "create an org; you become its owner",
        run: async ({ client, out, args: [name = ""] }) => {
          const org = await (await client()).post("/orgs", { body: { name } });
          out.done(`created org ${org.name}`, org);
        },
      },
      {
        name: "delete <org>",
        summary: "delete an empty org",
        run: async ({ client, out, args: [org = ""] }) => {
          await (await client()).delete("/orgs/:org", { params: { org } });
          out.done(`deleted org ${org}`, { deleted: org });
        },
      },
      {
        name: "repos <org>",
        summary: "the org's repos",
        run: async ({ client, out, args: [org = ""] }) =>
          out.table((await (await client()).get("/orgs/:org/repos", { params: { org } })).repos, [
            { header: "name", value: (r) => r.name },
            { header: "created", value: (r) => r.created_at, kind: "time" },
            { header: "by", value: (r) => r.created_by },
          ]),
      },
    ],
  });

  resource(program, env, {
    name: "members",
    aliases: ["member"],
    summary: "who belongs to an org, and as what",
    verbs: [
      {
        name: "list <org>",
        aliases: ["ls"],
        summary: "the org's members",
        run: async ({ client, out, args: [org = ""] }) =>
          out.table((await (await client()).get("/orgs/:org/members", { params: { org } })).members, MEMBER),
      },
      {
        name: "add <org> <identity>",
        summary: "add a member (or change a member's role)",
        aliases: ["set"],
        options: [
          { flags: "--role <role>", description: "owner or member", choices: ROLE, default: "member" },
        ],
        run: async ({ client, out, args: [org = "", identity = ""], opts }) => {
          const m = await (await client()).post("/orgs/:org/members/:identity", {
            params: { org, identity },
            body: { role: opts["role"] as (typeof ROLE)[number] },
          });
          out.done(`${identity} is now ${m.role} of ${org}`, m);
        },
      },
      {
        name: "remove <org> <identity>",
        aliases: ["rm"],
        summary: "remove a member",
        run: async ({ client, out, args: [org = "", identity = ""] }) => {
          await (await client()).delete("/orgs/:org/members/:identity", { params: { org, identity } });
          out.done(`removed ${identity} from ${org}`, { removed: identity, org });
        },
      },
    ],
  });

  resource(program, env, {
    name: "invites",
    aliases: ["invite"],
    summary: "invitations to join an org",
    verbs: [
      {
        name: "create <org> <email>",
        summary: "invite someone by email; prints the token they accept with",
        options: [
          { flags: "--role <role>", description: "owner or member", choices: ROLE, default: "member" },
        ],
        run: async ({ client, out, args: [org = "", email = ""], opts }) => {
          const invite = await (await client()).post("/orgs/:org/invites", {
            params: { org },
            body: { email, role: opts["role"] as (typeof ROLE)[number] },
          });
          if (out.json) return out.writeJson(invite);
          out.done(`invited ${invite.email} to ${org} as ${invite.role}`);
          out.line(`token: ${invite.token}`);
          out.note(`they accept with: quire invites accept ${org} ${invite.token}`);
        },
      },
      {
        name: "list <org>",
        aliases: ["ls"],
        summary: "the org's open invitations",
        run: async ({ client, out, args: [org = ""] }) =>
          out.table((await (await client()).get("/orgs/:org/invites", { params: { org } })).invites, INVITE),
      },
      {
        name: "accept <org> <token>",
        summary: "accept an invitation sent to your email",
        run: async ({ client, out, args: [org = "", token = ""] }) => {
          const m = await (await client()).post("/orgs/:org/invites/:token/accept", {
            params: { org, token },
            body: {},
          });
          out.done(`you are now ${m.role} of ${org}`, m);
        },
      },
      {
        name: "revoke <org> <id>",
        summary: "withdraw an invitation",
        run: async ({ client, out, args: [org = "", id = ""] }) => {
          await (await client()).delete("/orgs/:org/invites/:id", { params: { org, id } });
          out.done(`revoked invite ${id}`, { revoked: id, org });
        },
      },
    ],
  });
}
