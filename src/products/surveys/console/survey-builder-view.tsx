/** @jsxImportSource hono/jsx */
// What the survey builder shows on a survey's console page (its forms post to survey-builder.tsx):
// the questions in order with, for writers, a form to add one of any type (options, scale bounds,
// matrix rows and columns, required, its section), and per question an edit form, move up and
// down, delete, and its branching.
import { QUESTION_TYPES, type QuestionType } from "../surveys.schemas";

/** How each type reads in the builder's select. */
export const TYPE_LABELS: Record<QuestionType, string> = {
  text: "Text",
  email: "Email address",
  choice: "Single choice",
  multi_choice: "Multiple choice",
  rating: "Rating (1–5)",
  nps: "NPS (0–10)",
  scale: "Scale (min–max)",
  slider: "Slider (min–max)",
  matrix: "Matrix (rows × columns)",
  ranking: "Ranking",
  yes_no: "Yes / no",
  date: "Date",
};

export const NUMERIC = new Set<string>(["rating", "nps", "scale", "slider"]);
export const OPERATORS = {
  equals: "is",
  less_than: "is less than",
  less_than_or_equal: "is at most",
  greater_than: "is more than",
  greater_than_or_equal: "is at least",
  includes: "includes",
} as const;
export type Operator = keyof typeof OPERATORS;

/** What the builder shows of a question (the API's view). */
export interface BuilderQuestion {
  id: string;
  type: QuestionType;
  title: string;
  description: string | null;
  options: string[];
  settings: Record<string, unknown>;
  position: number;
  branching: Record<string, unknown>;
  section_id: string | null;
}

/** A section of the survey as the builder offers it. */
export interface BuilderSection {
  id: string;
  title: string | null;
  position: number;
}

const sectionName = (s: BuilderSection) => s.title || `Section ${s.position}`;

/** The section a question is in (only when the survey has sections; `has_section` tells the handler the field was offered). */
function SectionSelect(props: { prefix: string; sections: BuilderSection[]; value: string | null }) {
  if (props.sections.length === 0) return null;
  return (
    <div class="field narrow">
      <input type="hidden" name="has_section" value="1" />
      <label for={`${props.prefix}-section`}>Section</label>
      <select id={`${props.prefix}-section`} name="section_id">
        <option value="">(none)</option>
        {props.sections.map((s) => (
          <option value={s.id} selected={props.value === s.id}>
            {sectionName(s)}
          </option>
        ))}
      </select>
    </div>
  );
}

export const lines = (text: string) =>
  text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
export const listText = (value: unknown) => (Array.isArray(value) ? value.join("\n") : "");

/** The notices of the builder's redirects. */
export const BUILDER_NOTICES = {
  "question-added": "Question added.",
  "question-saved": "Question saved.",
  "question-moved": "Questions reordered.",
  "question-deleted": "Question deleted.",
  "branching-saved": "Branching saved.",
};

/** The type-specific fields of a question form (all shown; the API says which apply to a type). */
function TypeFields(props: { prefix: string; q?: BuilderQuestion }) {
  const { prefix, q } = props;
  const settings = q?.settings ?? {};
  return (
    <>
      <div class="field">
        <label for={`${prefix}-description`}>Description (optional)</label>
        <input id={`${prefix}-description`} type="text" name="description" maxlength={5000} value={q?.description ?? ""} />
      </div>
      {!q || ["choice", "multi_choice", "ranking"].includes(q.type) ? (
        <div class="field">
          <label for={`${prefix}-options`}>Options, one per line (single choice, multiple choice, ranking)</label>
          <textarea id={`${prefix}-options`} name="options" rows={3}>
            {q ? q.options.join("\n") : ""}
          </textarea>
        </div>
      ) : null}
      {!q || q.type === "scale" || q.type === "slider" ? (
        <div class="inline-form">
          <div class="field narrow">
            <label for={`${prefix}-min`}>Lowest (scale, slider)</label>
            <input id={`${prefix}-min`} type="number" name="min" step={1} value={settings.min === undefined ? "1" : String(settings.min)} />
          </div>
          <div class="field narrow">
            <label for={`${prefix}-max`}>Highest</label>
            <input id={`${prefix}-max`} type="number" name="max" step={1} value={settings.max === undefined ? "10" : String(settings.max)} />
          </div>
        </div>
      ) : null}
      {!q || q.type === "matrix" ? (
        <div class="inline-form">
          <div class="field">
            <label for={`${prefix}-rows`}>Matrix rows, one per line</label>
            <textarea id={`${prefix}-rows`} name="rows" rows={3}>
              {listText(settings.rows)}
            </textarea>
          </div>
          <div class="field">
            <label for={`${prefix}-columns`}>Matrix columns, one per line</label>
            <textarea id={`${prefix}-columns`} name="columns" rows={3}>
              {listText(settings.columns)}
            </textarea>
          </div>
        </div>
      ) : null}
      <div class="checks">
        <label class="check">
          <input type="checkbox" name="optional" value="on" checked={settings.required === false} /> Optional (may be skipped)
        </label>
        {!q || q.type === "text" ? (
          <label class="check">
            <input type="checkbox" name="multiline" value="on" checked={settings.multiline === true} /> Several lines (text)
          </label>
        ) : null}
      </div>
    </>
  );
}

/** A branching condition or target as words. */
function describeTarget(t: Record<string, unknown> | undefined, titles: Map<string, string>): string {
  if (!t || t.go_to_next) return "the next question";
  if (t.skip_to_end) return "the end";
  return `“${titles.get(String(t.go_to_question_id)) ?? "a deleted question"}”`;
}

/** The questions of a survey with the builder's forms for writers. */
export function QuestionBuilder(props: { base: string; questions: BuilderQuestion[]; sections: BuilderSection[]; writer: boolean }) {
  const { base, questions, sections, writer } = props;
  const sectionNames = new Map(sections.map((s) => [s.id, sectionName(s)]));
  const titles = new Map(questions.map((q, i) => [q.id, `${i + 1}. ${q.title}`]));
  return (
    <section class="section" aria-labelledby="questions-title">
      <h2 id="questions-title">Questions</h2>
      {questions.length === 0 ? <p class="empty">No questions yet.{writer ? " Add the first one below." : ""}</p> : null}
      <ol class="builder">
        {questions.map((q, i) => {
          const rules = (q.branching.rules ?? []) as Array<{ if: Record<string, unknown>; then: Record<string, unknown> }>;
          const later = questions.slice(i + 1);
          return (
            <li class="question-card" data-testid="question-row" data-question-id={q.id} data-question-type={q.type}>
              <h3>
                {i + 1}. {q.title}
              </h3>
              <p class="meta">
                {TYPE_LABELS[q.type]}
                {q.section_id && sectionNames.has(q.section_id) ? ` · in ${sectionNames.get(q.section_id)}` : ""}
                {q.options.length ? ` · ${q.options.join(" · ")}` : ""}
                {q.settings.required === false ? " · optional" : ""}
              </p>
              {rules.length || (q.branching.default && !(q.branching.default as Record<string, unknown>).go_to_next) ? (
                <ul class="small">
                  {rules.map((rule) => {
                    const [op, value] = Object.entries(rule.if)[0] ?? ["equals", ""];
                    return (
                      <li>
                        If the answer {OPERATORS[op as Operator] ?? op} <code>{JSON.stringify(value)}</code>, go to {describeTarget(rule.then, titles)}
                      </li>
                    );
                  })}
                  <li>Otherwise, go to {describeTarget(q.branching.default as Record<string, unknown>, titles)}</li>
                </ul>
              ) : null}
              {writer ? (
                <div class="row-actions">
                  <form method="post" action={`${base}/questions/${q.id}/move`}>
                    <input type="hidden" name="direction" value="up" />
                    <button type="submit" class="secondary small" disabled={i === 0} aria-label={`Move question ${i + 1} up`}>
                      ↑ Up
                    </button>
                  </form>
                  <form method="post" action={`${base}/questions/${q.id}/move`}>
                    <input type="hidden" name="direction" value="down" />
                    <button type="submit" class="secondary small" disabled={i === questions.length - 1} aria-label={`Move question ${i + 1} down`}>
                      ↓ Down
                    </button>
                  </form>
                  <form method="post" action={`${base}/questions/${q.id}/delete`} data-testid="delete-question">
                    <button type="submit" class="danger small" aria-label={`Delete question ${i + 1}`}>
                      Delete
                    </button>
                  </form>
                </div>
              ) : null}
              {writer ? (
                <details>
                  <summary>Edit</summary>
                  <form method="post" action={`${base}/questions/${q.id}`} data-testid="edit-question">
                    <div class="field">
                      <label for={`q-${q.id}-title`}>Question</label>
                      <input id={`q-${q.id}-title`} type="text" name="title" required maxlength={1000} value={q.title} />
                    </div>
                    <SectionSelect prefix={`q-${q.id}`} sections={sections} value={q.section_id} />
                    <TypeFields prefix={`q-${q.id}`} q={q} />
                    <button type="submit" class="small">
                      Save question
                    </button>
                  </form>
                </details>
              ) : null}
              {writer ? (
                <details>
                  <summary>Branching</summary>
                  <form method="post" action={`${base}/questions/${q.id}/branching`} class="inline-form" data-testid="add-rule">
                    <input type="hidden" name="action" value="add" />
                    <div class="field narrow">
                      <label for={`b-${q.id}-op`}>If the answer</label>
                      <select id={`b-${q.id}-op`} name="operator">
                        {Object.entries(OPERATORS)
                          .filter(([op]) => op === "equals" || (op === "includes" ? q.type === "multi_choice" : NUMERIC.has(q.type)))
                          .map(([op, label]) => (
                            <option value={op}>{label}</option>
                          ))}
                      </select>
                    </div>
                    <div class="field narrow">
                      <label for={`b-${q.id}-value`}>Value</label>
                      <input id={`b-${q.id}-value`} type="text" name="value" required list={q.options.length ? `b-${q.id}-options` : undefined} />
                      {q.options.length ? (
                        <datalist id={`b-${q.id}-options`}>
                          {q.options.map((o) => (
                            <option value={o} />
                          ))}
                        </datalist>
                      ) : null}
                    </div>
                    <div class="field">
                      <label for={`b-${q.id}-target`}>go to</label>
                      <select id={`b-${q.id}-target`} name="target">
                        {later.map((l) => (
                          <option value={l.id}>{titles.get(l.id)}</option>
                        ))}
                        <option value="end">the end</option>
                      </select>
                    </div>
                    <div class="field">
                      <button type="submit" class="secondary small">
                        Add rule
                      </button>
                    </div>
                  </form>
                  <form method="post" action={`${base}/questions/${q.id}/branching`} class="inline-form">
                    <input type="hidden" name="action" value="default" />
                    <div class="field">
                      <label for={`b-${q.id}-default`}>Otherwise go to</label>
                      <select id={`b-${q.id}-default`} name="default_target">
                        <option value="next">the next question</option>
                        {later.map((l) => (
                          <option value={l.id}>{titles.get(l.id)}</option>
                        ))}
                        <option value="end">the end</option>
                      </select>
                    </div>
                    <div class="field">
                      <button type="submit" class="secondary small">
                        Set
                      </button>
                    </div>
                  </form>
                  {rules.length ? (
                    <form method="post" action={`${base}/questions/${q.id}/branching`}>
                      <input type="hidden" name="action" value="clear" />
                      <button type="submit" class="danger small">
                        Clear branching
                      </button>
                    </form>
                  ) : null}
                </details>
              ) : null}
            </li>
          );
        })}
      </ol>
      {writer ? (
        <form method="post" action={`${base}/questions`} class="section" data-testid="add-question">
          <h3>Add a question</h3>
          <div class="inline-form">
            <div class="field narrow">
              <label for="new-q-type">Type</label>
              <select id="new-q-type" name="type">
                {QUESTION_TYPES.map((type) => (
                  <option value={type}>{TYPE_LABELS[type]}</option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="new-q-title">Question</label>
              <input id="new-q-title" type="text" name="title" required maxlength={1000} placeholder="How likely are you to recommend us?" />
            </div>
          </div>
          <SectionSelect prefix="new-q" sections={sections} value={null} />
          <TypeFields prefix="new-q" />
          <button type="submit">Add question</button>
        </form>
      ) : null}
    </section>
  );
}
