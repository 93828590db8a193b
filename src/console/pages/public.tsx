/** @jsxImportSource hono/jsx */
// The pages without a session: sign-in, sign-up, the one-time link's confirm page and its use,
// sign-out. Asking for a link answers the same page whoever asks (no account enumeration).
import { Hono, type Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import { getDb } from "../../db/client";
import { clientIp, clientNetwork, ipKey, enforceBucket } from "../../platform/rate-limit/middleware";
import { backgroundOf } from "../../platform/request-context";
import { log } from "../../platform/log";
import { MessagePage, PublicLayout } from "../layout";
import { clearSessionCookie, requireSession, setSessionCookie, type ConsoleEnv } from "../session";
import {
  consumeLink,
  endAllSessions,
  endSession,
  findUsableLink,
  linksInTerminal,
  loadSession,
  requestSignIn,
  requestSignUp,
  SESSION_COOKIE,
} from "../sign-in.service";
import { formText } from "../forms";
import { settings } from "../../platform/config";

export const publicPages = new Hono<ConsoleEnv>();

const Email = z.string().trim().email().max(320);
/** One line of text: no control characters (a team name shows in mail and pages). */
const TeamName = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[^\u0000-\u001f\u007f-\u009f\u2028\u2029]*$/);

/** Public console traffic is counted per client IP in the `public` bucket. */
const perIp = async (c: Parameters<typeof enforceBucket>[0]) => enforceBucket(c, "public", ipKey(c));

function SignInForm(props: { email?: string; error?: string }) {
  return (
    <form method="post" action="/console/sign-in" class="card" data-testid="sign-in">
      <h1>Sign in</h1>
      <p class="muted">We email you a link that signs you in. No password to remember.</p>
      {props.error ? <p class="errors">{props.error}</p> : null}
      <div class="field">
        <label for="email">Email address</label>
        <input id="email" type="email" name="email" autocomplete="email" required value={props.email ?? ""} />
      </div>
      <button type="submit">Email me a sign-in link</button>
      <p class="small muted">
        New here? <a href="/console/sign-up">Create a team</a>
      </p>
    </form>
  );
}

function CheckMail(props: { email: string; what: string; terminal: boolean }) {
  // With the local outbox nothing is emailed: the link is only in the terminal of `npm start`.
  if (props.terminal) {
    return (
      <PublicLayout title="Find the link in the terminal">
        <section class="card" data-testid="check-terminal">
          <h1>Find the link in the terminal</h1>
          <p>
            This server sends no email (its mail transport is the local outbox). If <strong>{props.email}</strong> {props.what}, the link is printed in the
            terminal running <code>npm start</code>, on a line <code>console link (outbox transport: local only)</code>. It works once, for 15 minutes.
          </p>
        </section>
      </PublicLayout>
    );
  }
  return (
    <PublicLayout title="Check your email">
      <section class="card" data-testid="check-email">
        <h1>Check your email</h1>
        <p>
          If <strong>{props.email}</strong> {props.what}, a link is on its way. It works once, for 15 minutes.
        </p>
        <p class="small muted">Nothing arrived? Check the spam folder, or ask again in a few minutes.</p>
      </section>
    </PublicLayout>
  );
}

publicPages.get("/sign-in", async (c) => {
  // A valid session goes straight in.
  if (await loadSession(getDb(c.env.DB), getCookie(c, SESSION_COOKIE))) return c.redirect("/console", 303);
  return c.html(
    <PublicLayout title="Sign in">
      <SignInForm />
    </PublicLayout>,
  );
});

publicPages.post("/sign-in", async (c) => {
  await perIp(c);
  const email = Email.safeParse(await formText(c, "email"));
  if (!email.success) {
    return c.html(
      <PublicLayout title="Sign in">
        <SignInForm error="Enter a valid email address." />
      </PublicLayout>,
      422,
    );
  }
  // The look-up and the mail happen after the answer: its time says nothing about membership.
  const work = requestSignIn(c.env, email.data, clientNetwork(clientIp(c))).catch((error) =>
    log.error("console sign-in link failed", { error: String(error) }),
  );
  const background = backgroundOf(c);
  if (background) background.waitUntil(work);
  else await work;
  return checkMailRedirect(c, "sign-in", email.data);
});

function SignUpForm(props: { email?: string; teamName?: string; error?: string }) {
  return (
    <form method="post" action="/console/sign-up" class="card" data-testid="sign-up">
      <h1>Create your team</h1>
      <p class="muted">Start on the free plan. We email you a link to confirm; nothing is created before you use it.</p>
      {props.error ? <p class="errors">{props.error}</p> : null}
      <div class="field">
        <label for="email">Your email address</label>
        <input id="email" type="email" name="email" autocomplete="email" required value={props.email ?? ""} />
      </div>
      <div class="field">
        <label for="team_name">Team name</label>
        <input id="team_name" type="text" name="team_name" required maxlength={200} value={props.teamName ?? ""} />
      </div>
      <button type="submit">Email me a link</button>
      <p class="small muted">
        Already have an account? <a href="/console/sign-in">Sign in</a>
      </p>
    </form>
  );
}

publicPages.get("/sign-up", (c) =>
  c.html(
    <PublicLayout title="Sign up">
      <SignUpForm />
    </PublicLayout>,
  ),
);

publicPages.post("/sign-up", async (c) => {
  await perIp(c);
  const raw = { email: await formText(c, "email"), teamName: await formText(c, "team_name") };
  const email = Email.safeParse(raw.email);
  const teamName = TeamName.safeParse(raw.teamName);
  if (!email.success || !teamName.success) {
    return c.html(
      <PublicLayout title="Sign up">
        <SignUpForm
          email={raw.email}
          teamName={raw.teamName}
          error={!email.success ? "Enter a valid email address." : "Enter a team name: one line, at most 200 characters."}
        />
      </PublicLayout>,
      422,
    );
  }
  await requestSignUp(c.env, email.data, teamName.data, clientNetwork(clientIp(c)));
  return checkMailRedirect(c, "sign-up", email.data);
});

/** The cookie that carries the address to the "check your email" page (never the URL), for 10 minutes. */
const CHECK_COOKIE = "edp_check";
const CHECK_PATH = "/console/check-email";
const CHECK_WHAT = { "sign-in": "belongs to a member of a team", "sign-up": "is yours" } as const;

/** Post/redirect/get of sign-in and sign-up: 303 to the one "check your email" page. */
function checkMailRedirect(c: Context<ConsoleEnv>, kind: keyof typeof CHECK_WHAT, email: string): Response {
  setCookie(c, CHECK_COOKIE, `${kind}:${email}`, { httpOnly: true, sameSite: "Lax", path: CHECK_PATH, secure: settings(c.env).https, maxAge: 600 });
  return c.redirect(CHECK_PATH, 303);
}

publicPages.get("/check-email", (c) => {
  const [kind, ...rest] = (getCookie(c, CHECK_COOKIE) ?? "").split(":");
  const email = Email.safeParse(rest.join(":"));
  const what = Object.hasOwn(CHECK_WHAT, kind ?? "") ? CHECK_WHAT[kind as keyof typeof CHECK_WHAT] : null;
  if (!email.success || !what) return c.redirect("/console/sign-in", 303);
  return c.html(<CheckMail email={email.data} what={what} terminal={linksInTerminal(c.env)} />);
});

const LINK_TITLES = { sign_in: "Sign in", sign_up: "Create your team", invite: "Join the team" } as const;

// The link only shows a button: mail scanners that fetch it sign nobody in.
publicPages.get("/auth/:token", async (c) => {
  await perIp(c);
  const link = await findUsableLink(getDb(c.env.DB), c.req.param("token"));
  if (!link)
    return c.html(
      <MessagePage
        title="This link has expired"
        message="Sign-in links work once, for 15 minutes (invitations for 7 days). Ask for a new one."
        signedIn={false}
      />,
      410,
    );
  return c.html(
    <PublicLayout title={LINK_TITLES[link.kind]}>
      <form method="post" class="card">
        <h1>{LINK_TITLES[link.kind]}</h1>
        <p>
          {link.kind === "sign_up" ? (
            <>
              Create the team <strong>{link.teamName}</strong> as <strong>{link.email}</strong>.
            </>
          ) : link.kind === "invite" ? (
            <>
              Join the team as <strong>{link.email}</strong> ({link.role}).
            </>
          ) : (
            <>
              Continue as <strong>{link.email}</strong>.
            </>
          )}
        </p>
        <button type="submit" data-testid="confirm-sign-in">
          {link.kind === "sign_up" ? "Create team and sign in" : "Sign in"}
        </button>
      </form>
    </PublicLayout>,
  );
});

publicPages.post("/auth/:token", async (c) => {
  await perIp(c);
  const used = await consumeLink(c.env, c.req.param("token"));
  if (!used)
    return c.html(<MessagePage title="This link has expired" message="This link was already used or has expired. Ask for a new one." signedIn={false} />, 410);
  setSessionCookie(c, used.sessionToken);
  return c.redirect(used.teamId ? `/console/teams/${used.teamId}/keys` : "/console", 303);
});

publicPages.post("/sign-out", async (c) => {
  const session = await loadSession(getDb(c.env.DB), getCookie(c, SESSION_COOKIE));
  if (session) await endSession(getDb(c.env.DB), session.sessionId);
  clearSessionCookie(c);
  return c.redirect("/console/sign-in", 303);
});

publicPages.post("/sign-out-everywhere", requireSession(), async (c) => {
  await endAllSessions(getDb(c.env.DB), c.get("consoleUser").userId);
  clearSessionCookie(c);
  return c.redirect("/console/sign-in", 303);
});
