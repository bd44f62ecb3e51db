import { z } from "zod";
import { timestamp, uuid } from "./wire.ts";

const orgRole = z.enum(["owner", "member"]);

export const orgResponse = z.object({ name: z.string(), created_at: timestamp, created_by: z.string() });
export type OrgResponse = z.output<typeof orgResponse>;
export const orgListResponse = z.object({ orgs: z.array(orgResponse) });
export type OrgListResponse = z.output<typeof orgListResponse>;

export const memberResponse = z.object({
  org: z.string(),
  identity: z.string(),
  role: orgRole,
  added_at: timestamp,
  added_by: z.string(),
});
export type MemberResponse = z.output<typeof memberResponse>;
export const memberListResponse = z.object({ members: z.array(memberResponse) });
export type MemberListResponse = z.output<typeof memberListResponse>;

export const inviteResponse = z.object({
  id: uuid,
  org: z.string(),
  email: z.string(),
  role: orgRole,
  created_at: timestamp,
  created_by: z.string(),
  expires_at: timestamp,
});
export type InviteResponse = z.output<typeof inviteResponse>;
/** A new invitation: the only reply that shows its token. */
export const createdInviteResponse = inviteResponse.extend({ token: z.string() });
export type CreatedInviteResponse = z.output<typeof createdInviteResponse>;
export const inviteListResponse = z.object({ invites: z.array(inviteResponse) });
export type InviteListResponse = z.output<typeof inviteListResponse>;
