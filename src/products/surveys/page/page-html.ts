// HTML of the hosted survey page: a small, self-contained, accessible document whose look comes
// from the survey's validated settings. Only the page's own script (/s/_/survey.js) runs on it.
import { escapeHtml, htmlPage } from "../../../platform/html";
import type { ResolvedSettings } from "./survey-settings";

/** JSON safe to place inside a <script type="application/json"> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");
}

function styles(s: ResolvedSettings): string {
  // Colours are validated hex values (survey-settings.ts), so they are safe inside CSS.
  return `:root{--primary:${s.primary};--bg:${s.background};--text:${s.text};--card:${s.dark ? "#1b2030" : "#fff"};color-scheme:${s.dark ? "dark" : "light"}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--text)}
main{max-width:640px;margin:0 auto;padding:24px 16px}
.card{background:var(--card);border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.12);padding:24px}
h1{font-size:1.4rem;margin:0 0 12px}
fieldset{border:0;padding:0;margin:0}
legend.title{font-size:1.15rem;font-weight:600;margin-bottom:8px;padding:0}
.description{margin:0 0 12px;opacity:.8}
input[type=text],input[type=email],input[type=number],input[type=date],textarea{width:100%;padding:10px 12px;border:1px solid #c5c9d6;border-radius:8px;font:inherit}
input:focus-visible,textarea:focus-visible,button:focus-visible{outline:3px solid var(--primary);outline-offset:2px}
button{font:inherit;cursor:pointer}
.primary{background:var(--primary);color:#fff;border:0;border-radius:8px;padding:10px 20px;min-height:44px}
.primary:disabled{opacity:.6;cursor:progress}
.actions{margin-top:16px;display:flex;justify-content:flex-end}
.choices{display:grid;gap:8px}
.choice{display:flex;gap:10px;align-items:center;padding:10px 12px;border:1px solid #d6d9e3;border-radius:8px;min-height:44px}
.row{display:flex;flex-wrap:wrap;gap:6px}
.choice-btn{min-width:44px;min-height:44px;border:1px solid #c5c9d6;border-radius:8px;background:#fff}
.choice-btn[aria-pressed=true]{background:var(--primary);color:#fff;border-color:var(--primary)}
.secondary{background:none;color:inherit;border:1px solid #c5c9d6;border-radius:8px;padding:10px 20px;min-height:44px}
.secondary:disabled{opacity:.6;cursor:progress}
.actions .back{margin-right:auto}
.star,.star[aria-pressed=true]{border:0;background:none;padding:4px;color:#767c8f;display:inline-flex;align-items:center;justify-content:center}
.star svg{width:32px;height:32px;fill:none;stroke:currentColor;stroke-width:1.6;stroke-linejoin:round}
.star.lit{color:#d99a00}.star.lit svg{fill:#f5b301}
.scale-labels{display:flex;justify-content:space-between;font-size:.85rem;opacity:.7;margin-top:4px}
.slider{display:flex;align-items:center;gap:10px}.slider input{flex:1}
.matrix-wrap{overflow-x:auto}.matrix{border-collapse:collapse;width:100%}.matrix th,.matrix td{padding:8px;text-align:center;border-bottom:1px solid #eceef3}.matrix th[scope=row]{text-align:left}
.ranking{padding-left:1.5em;display:grid;gap:6px}.ranking li{display:flex;gap:8px;align-items:center;border:1px solid #d6d9e3;border-radius:8px;padding:6px 8px;background:#fff}
.ranking .label{flex:1}.ranking button{min-width:36px;min-height:36px;border:1px solid #c5c9d6;border-radius:6px;background:#fff}.grip{cursor:grab;opacity:.5}.dragging{opacity:.5}
.progress{position:relative;height:8px;background:#e3e6ee;border-radius:4px;margin:0 0 20px}.bar{height:100%;background:var(--primary);border-radius:4px;transition:width .2s}
.progress-text{position:absolute;right:0;top:10px;font-size:.8rem;opacity:.7}
.error{color:#b3261e;min-height:1.5em;margin:8px 0 0}
.done{text-align:center}.done h1{font-size:2.5rem;color:var(--primary)}
.notice{text-align:center}
@media (prefers-reduced-motion:reduce){.bar{transition:none}}`;
}

function shell(title: string, settings: ResolvedSettings, body: string): string {
  return htmlPage({ title, style: styles(settings), body: `<main><div class="card">${body}</div></main>` });
}

export interface PageSurvey {
  name: string;
  slug: string;
  questionCount: number;
  description?: string | null;
}

/** The page of an active survey: the flow runs in the page script. */
export function surveyPage(survey: PageSurvey, settings: ResolvedSettings, apiBase: string): string {
  const config = {
    slug: survey.slug,
    name: survey.name,
    description: survey.description ?? null,
    questionCount: survey.questionCount,
    api: `${apiBase}/surveys/${encodeURIComponent(survey.slug)}`,
    settings: {
      labels: settings.labels,
      showProgress: settings.showProgress,
      thankYou: settings.thankYou,
      redirectUrl: settings.redirectUrl,
      redirectDelay: settings.redirectDelay,
    },
  };
  return shell(
    survey.name,
    settings,
    `<div id="survey" aria-live="polite"><h1>${escapeHtml(survey.name)}</h1><noscript><p>This survey needs JavaScript.</p></noscript></div>
<script type="application/json" id="survey-config">${scriptJson(config)}</script>
<script src="/s/_/survey.js" defer></script>`,
  );
}

/** A clear page for a survey that does not take responses (closed) or does not exist. */
export function noticePage(title: string, message: string, settings: ResolvedSettings): string {
  return shell(title, settings, `<div class="notice" data-state="notice"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></div>`);
}
