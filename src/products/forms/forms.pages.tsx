/** @jsxImportSource hono/jsx */
// The pages a visitor's browser sees from Forms: the hosted thank-you page and the page of a
// refused post (what to fix), in the console's look (its stylesheets, no script at all) under a
// policy that allows nothing else. Visitor and tenant text is JSX text: always escaped.
import type { Child } from "hono/jsx";
import { raw } from "hono/html";
import type { FieldProblem } from "./forms.intake";

/** Headers of the visitor pages: the console's styles only, no script, never framed or cached. */
export const VISITOR_PAGE_HEADERS: Record<string, string> = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

function VisitorPage(props: { title: string; children: Child }) {
  return (
    <>
      {raw("<!doctype html>")}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="robots" content="noindex" />
          <title>{props.title}</title>
          <link rel="stylesheet" href="/assets/console.css" />
          <link rel="stylesheet" href="/assets/products.css" />
        </head>
        <body class="public">
          <main class="public-main">
            <section class="card narrow">{props.children}</section>
          </main>
        </body>
      </html>
    </>
  );
}

/** The hosted thank-you page of a form. */
export function thanksPage(formName: string): string {
  return String(
    <VisitorPage title="Thank you">
      <h1 data-testid="thanks">Thank you</h1>
      <p>Your submission to {formName} was received.</p>
      <p class="muted small">You can close this page, or go back to the site you came from.</p>
    </VisitorPage>,
  );
}

/** A refused post: what to fix, field by field. */
export function refusedPage(title: string, message: string, problems: FieldProblem[]): string {
  return String(
    <VisitorPage title={title}>
      <h1>{title}</h1>
      <p>{message}</p>
      {problems.length > 0 ? (
        <ul class="errors" data-testid="problems">
          {problems.map((p) => (
            <li data-code={p.code}>{p.message}</li>
          ))}
        </ul>
      ) : null}
      <p class="muted small">Go back to the form, correct it and send it again.</p>
    </VisitorPage>,
  );
}
