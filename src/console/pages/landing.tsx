/** @jsxImportSource hono/jsx */
// The landing page at `/`: what the platform is, and the ways in (console, sign-up, API reference).
import { PublicLayout } from "../layout";

const PRODUCTS = [
  ["Mail", "Transactional and broadcast email with sandbox keys, verified sending domains and delivery webhooks."],
  ["Logs", "Ingest structured logs, search them, tail them live and alert on patterns."],
  ["Webhook relay", "Receive webhooks on a stable address, verify signatures and fan them out with retries."],
  ["Surveys", "Hosted and embedded surveys with branching, AI follow-ups and exports."],
  ["Push", "Web push notifications to your subscribers, with per-delivery results."],
  ["Audit reports", "Findings, verifications, burn-down summaries and shareable reports."],
] as const;

export function LandingPage(props: { appUrl: string }) {
  return (
    <PublicLayout title="Developer platform on the edge" wide>
      <section class="hero">
        <h1>One API for the plumbing every product needs</h1>
        <p>Mail, logs, webhooks, surveys, push and audit reports on Cloudflare's edge, behind one key with the scopes you choose.</p>
        <div class="actions">
          <a class="button" href="/console/sign-up">
            Create a team
          </a>
          <a class="button secondary" href="/console/sign-in">
            Sign in to the console
          </a>
          <a class="button secondary" href="/api/v1/docs">
            API reference
          </a>
        </div>
      </section>
      <ul class="features">
        {PRODUCTS.map(([name, text]) => (
          <li>
            <h2>{name}</h2>
            <p>{text}</p>
          </li>
        ))}
      </ul>
      <section class="card">
        <h2>Your first request</h2>
        <p class="muted">Make a key in the console, then:</p>
        <pre class="code-sample">
          <code>{`curl ${props.appUrl}/api/v1/usage \\\n  -H "Authorization: Bearer edp_..."`}</code>
        </pre>
      </section>
      <footer class="footer small">
        Edge Platform · rate limits, quotas and usage per team · <a href="/api/v1/openapi.json">OpenAPI document</a>
      </footer>
    </PublicLayout>
  );
}
