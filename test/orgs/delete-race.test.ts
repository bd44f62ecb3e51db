import { describe, expect, it } from "vitest";
import { startTestApp } from "../support/app.ts";
import type { Res } from "../support/client.ts";
import { useFixture } from "../support/world.ts";
import { makeOrg, person } from "./fixtures.ts";

/**
 * Deleting an org while its owner invites, invitees accept and members are added (issue 17, the
 * class of the repo delete race): the delete answers 204 and every other request succeeds or is
 * refused as for an org that is gone (404, or an invitation that no longer exists). Never a 500.
 */

const app = useFixture(startTestApp);
const ROUNDS = 12;

describe("deleting an org while its members and invitations change", () => {
  it("answers 204, and no racing request gets a 500", { timeout: 60_000 }, async () => {
    const unexpected: string[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const owner = person("owner");
      const org = await makeOrg(app, owner);
      const as = app.as(owner);
      // Invitations to accept during the race, made before it.
      const invited = await Promise.all(
        [1, 2, 3, 4].map(async () => {
          const email = person("guest");
          const res = await as.post(`/orgs/${org}/invites`, { email, role: "member" });
          return { email, token: (res.body as { token: string }).token };
        }),
      );
      const racers: Promise<[string, Res]>[] = [
        ...[1, 2, 3, 4].map(
          async (n) =>
            [
              "invite",
              await as.post(`/orgs/${org}/invites`, { email: person(`new${n}`), role: "member" }),
            ] as [string, Res],
        ),
        ...invited.map(
          async ({ email, token }) =>
            ["accept", await app.as(email).post(`/orgs/${org}/invites/${token}/accept`, {})] as [string, Res],
        ),
        ...[1, 2, 3].map(
          async (n) =>
            ["member", await as.post(`/orgs/${org}/members/${person(`m${n}`)}`, { role: "member" })] as [
              string,
              Res,
            ],
        ),
      ];
      const deleted = await as.delete(`/orgs/${org}`);
      if (deleted.status !== 204)
        unexpected.push(`round ${r}: delete ${deleted.status} ${JSON.stringify(deleted.body)}`);
      for (const [op, res] of await Promise.all(racers))
        if (res.status >= 500) unexpected.push(`round ${r}: ${op} ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(unexpected).toEqual([]);
  });
});
