// Escaping for the HTML pages the Worker renders (hosted survey page, audit viewer and artefacts).

/** Text made safe for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch] as string);
}

/**
 * A whole page as every rendered page starts: UTF-8, a mobile viewport, kept out of search
 * indexes (hosted survey pages and shared reports are reached by link only). `title` is escaped
 * here; `style` and `body` are markup the caller escaped.
 */
export function htmlPage(page: { title: string; style: string; body: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(page.title)}</title>
<style>${page.style}</style>
</head>
<body>
${page.body}
</body>
</html>`;
}
