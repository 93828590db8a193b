/** @jsxImportSource hono/jsx */
// The members page: the team's members and pending invitations, inviting by email with a role
// (a 7-day link), changing a role, removing a member, and the record of console actions. Owners and
// admins manage; only owners touch ownership; the last owner stays (members.service.ts).
import { Hono, type Context } from "hono";
import { z } from "zod";
import { getDb } from "../../db/client";
import { ROLES, type Role } from "../../db/schema";
import { ApiError, zodDetails } from "../../platform/errors";
import { ROLE_LABELS, Time } from "../layout";
import { changeRole, invite, listActions, listInvitations, listMembers, removeMember, withdrawInvitation, type Actor } from "../members.service";
import { formText } from "../forms";
import { linksInTerminal } from "../sign-in.service";
import { page, redirectTo, teamPath } from "../render";
import { TableWrap, ColumnHeads } from "./parts";
import { requireRole, roleAtLeast, type ConsoleEnv } from "../session";

export const membersPages = new Hono<ConsoleEnv>();

/** The signed-in viewer as the actor of a console action. */
export function actorOf(c: Context<ConsoleEnv>): Actor {
  return { email: c.get("consoleUser").email, role: c.get("consoleTeam").role, userId: c.get("consoleUser").userId };
}

const NOTICES = {
  invited: "Invitation sent. It becomes a membership when its link is used (within 7 days).",
  // The local outbox emails nothing: the link is only in the terminal running `npm start`.
  invited_terminal:
    "Invitation made. This server sends no email (local outbox): its link is printed in the terminal running npm start; pass it on. It becomes a membership when used (within 7 days).",
  role: "Role changed.",
  removed: "Member removed. Their access to this team has ended.",
  withdrawn: "Invitation withdrawn.",
};

const ACTION_LABELS: Record<string, string> = {
  signed_in: "signed in",
  signed_up: "created the team",
  joined: "joined the team",
  key_created: "created the key",
  key_revoked: "revoked the key",
  member_invited: "invited",
  invitation_withdrawn: "withdrew the invitation of",
  member_role_changed: "changed the role of",
  member_removed: "removed",
  member_added: "added",
};

function RoleSelect(props: { name: string; id: string; selected?: Role; canGrantOwner: boolean }) {
  return (
    <select name={props.name} id={props.id}>
      {ROLES.filter((role) => role !== "owner" || props.canGrantOwner).map((role) => (
        <option value={role} selected={role === (props.selected ?? "developer")}>
          {ROLE_LABELS[role]}
        </option>
      ))}
    </select>
  );
}

membersPages.get("/members", async (c) => {
  const db = getDb(c.env.DB);
  const team = c.get("consoleTeam");
  const manage = roleAtLeast(team.role, "admin");
  const isOwner = team.role === "owner";
  const [members, invitations, actions] = await Promise.all([
    listMembers(db, team.id),
    manage ? listInvitations(db, team.id) : Promise.resolve([]),
    manage ? listActions(db, team.id) : Promise.resolve([]),
  ]);
  const base = teamPath(c, "members");
  return page(
    c,
    { title: "Members", active: "members", notices: NOTICES },
    <>
      <section class="section">
        <h2>People in {team.name}</h2>
        <TableWrap label="People in the team">
          <table>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Member since</th>
                {manage ? (
                  <th scope="col">
                    <span class="skip">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {members.map((member) => {
                // The last owner keeps the role: no control that could only answer 409.
                const lastOwner = member.role === "owner" && members.filter((m) => m.role === "owner").length === 1;
                const editable = manage && !lastOwner && (isOwner || member.role !== "owner");
                return (
                  <tr data-testid="member-row" data-role={member.role}>
                    <td>
                      {member.email}
                      {member.userId === c.get("consoleUser").userId ? <span class="muted small"> (you)</span> : null}
                    </td>
                    <td>
                      {editable ? (
                        <form method="post" action={`${base}/${member.userId}/role`} class="inline-form">
                          <label class="skip" for={`role-${member.userId}`}>
                            Role of {member.email}
                          </label>
                          <RoleSelect name="role" id={`role-${member.userId}`} selected={member.role} canGrantOwner={isOwner} />
                          <button type="submit" class="secondary small">
                            Change
                          </button>
                        </form>
                      ) : (
                        <>
                          <span class="badge">{ROLE_LABELS[member.role]}</span>
                          {lastOwner ? <span class="muted small"> the last owner</span> : null}
                        </>
                      )}
                    </td>
                    <td>
                      <Time iso={member.createdAt} />
                    </td>
                    {manage ? (
                      <td>
                        {editable ? (
                          <form method="post" action={`${base}/${member.userId}/remove`}>
                            <button type="submit" class="danger small" aria-label={`Remove ${member.email}`}>
                              Remove
                            </button>
                          </form>
                        ) : null}
                      </td>
                    ) : null}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableWrap>
      </section>
      {manage ? (
        <>
          <form method="post" action={`${base}/invite`} class="section" data-testid="invite-member">
            <h2>Invite someone</h2>
            <div class="inline-form">
              <div class="field">
                <label for="invite-email">Email address</label>
                <input id="invite-email" type="email" name="email" required maxlength={320} />
              </div>
              <div class="field narrow">
                <label for="invite-role">Role</label>
                <RoleSelect name="role" id="invite-role" canGrantOwner={isOwner} />
              </div>
              <button type="submit">Send invitation</button>
            </div>
            <p class="hint muted small">
              Owners manage everything including ownership; admins everything but ownership; developers keys and every product; viewers read only.
            </p>
          </form>
          <section class="section">
            <h2>Pending invitations</h2>
            {invitations.length === 0 ? (
              <p class="empty">No pending invitations.</p>
            ) : (
              <TableWrap label="Pending invitations">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Email</th>
                      <th scope="col">Role</th>
                      <th scope="col">Expires</th>
                      <th scope="col">
                        <span class="skip">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {invitations.map((inv) => (
                      <tr data-testid="invitation-row">
                        <td>{inv.email}</td>
                        <td>{inv.role ? ROLE_LABELS[inv.role] : ""}</td>
                        <td>
                          <Time iso={inv.expiresAt} />
                        </td>
                        <td>
                          <form method="post" action={`${base}/invitations/${inv.id}/withdraw`}>
                            <button type="submit" class="secondary small" aria-label={`Withdraw the invitation of ${inv.email}`}>
                              Withdraw
                            </button>
                          </form>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )}
          </section>
          <section class="section">
            <h2>Activity</h2>
            {actions.length === 0 ? (
              <p class="empty">Nothing recorded yet.</p>
            ) : (
              <TableWrap label="Activity of the team">
                <table>
                  <ColumnHeads names={["When", "Who", "What"]} />
                  <tbody>
                    {actions.map((action) => (
                      <tr data-testid="action-row">
                        <td>
                          <Time iso={action.createdAt} />
                        </td>
                        <td>{action.actor}</td>
                        <td>
                          {ACTION_LABELS[action.action] ?? action.action} {action.target ?? ""}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            )}
          </section>
        </>
      ) : null}
    </>,
  );
});

const Invite = z.object({ email: z.string().trim().email().max(320), role: z.enum(ROLES) });
const RoleField = z.enum(ROLES);

membersPages.post("/members/invite", async (c) => {
  requireRole(c, "admin");
  const parsed = Invite.safeParse({ email: await formText(c, "email"), role: await formText(c, "role") });
  if (!parsed.success) throw ApiError.validation(zodDetails(parsed.error));
  await invite(c.env, c.get("consoleTeam").id, c.get("consoleTeam").name, actorOf(c), parsed.data);
  return redirectTo(c, "members", linksInTerminal(c.env) ? "invited_terminal" : "invited");
});

membersPages.post("/members/invitations/:id/withdraw", async (c) => {
  requireRole(c, "admin");
  await withdrawInvitation(getDb(c.env.DB), c.get("consoleTeam").id, actorOf(c), c.req.param("id"));
  return redirectTo(c, "members", "withdrawn");
});

membersPages.post("/members/:user_id/role", async (c) => {
  requireRole(c, "admin");
  const role = RoleField.safeParse(await formText(c, "role"));
  if (!role.success) throw ApiError.validation({ role: ["must be owner, admin, developer or viewer"] });
  await changeRole(getDb(c.env.DB), c.get("consoleTeam").id, actorOf(c), c.req.param("user_id"), role.data);
  return redirectTo(c, "members", "role");
});

membersPages.post("/members/:user_id/remove", async (c) => {
  requireRole(c, "admin");
  await removeMember(getDb(c.env.DB), c.get("consoleTeam").id, actorOf(c), c.req.param("user_id"));
  return redirectTo(c, "members", "removed");
});
