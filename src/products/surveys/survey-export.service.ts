// The CSV export of a survey's completed responses (issue 25), shared by the API
// (GET /surveys/{id}/responses/export) and the console's export link: one row per completed
// response, one column per current question after the response id and its start and completion
// times. The rows are streamed: the body is a ReadableStream that reads one page of responses per
// pull from the survey's store, keyed on its seq (rowid), so neither the whole set nor an OFFSET
// scan is ever needed (the store's index on status carries the rowid: each page is one index range).
import { getDb } from "../../db/client";
import type { StoredAnswer } from "../../db/schema/surveys";
import type { Env } from "../../env";
import { csvRow, type CsvValue } from "../../platform/csv";
import { surveyStore } from "./surveys.store";
import { listQuestionRows, loadSurvey, type QuestionRow } from "./surveys.queries";

/** Responses read per pull: a page's answers stay far below an RPC's size, and 100,000 responses take 200 reads. */
export const EXPORT_PAGE = 500;
/** Characters of responses per page at most (long text answers): a store call's answer stays far under its 32 MiB. */
export const EXPORT_PAGE_BYTES = 8 * 1024 * 1024;

export interface CsvExport {
  filename: string;
  body: ReadableStream<Uint8Array>;
}

/** A response row's cell for one answer: numbers stay numbers, lists and matrices become one line of text. */
function answerCell(answer: StoredAnswer | undefined): CsvValue {
  const value = answer?.value;
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  if (Array.isArray(value)) return value.map(String).join("; ");
  if (typeof value === "object")
    return Object.entries(value)
      .map(([row, column]) => `${row}: ${String(column)}`)
      .join("; ");
  return String(value);
}

/** AI mode: the questions generated for this respondent, as `title: answer` lines in one cell. */
function generatedCell(generated: Array<{ id: string; title: string }>, answers: Record<string, StoredAnswer>): CsvValue {
  const lines = generated.filter((q) => answers[q.id]).map((q) => `${q.title}: ${answerCell(answers[q.id]) ?? ""}`);
  return lines.length ? lines.join("\n") : null;
}

/**
 * The export of one survey of the team (its 404 before any byte is sent). The header row names the
 * survey's current questions in position order (answers of deleted questions are not exported, as
 * in the summary); an AI-mode survey gets one more column with each respondent's generated questions.
 */
export async function exportResponsesCsv(env: Env, teamId: string, surveyId: string): Promise<CsvExport> {
  const db = getDb(env.DB);
  const survey = await loadSurvey(db, teamId, surveyId);
  const questions: QuestionRow[] = await listQuestionRows(db, survey);
  const ai = survey.mode === "ai";
  const header = csvRow(["response_id", "started_at", "completed_at", ...questions.map((q) => q.title), ...(ai ? ["generated_questions"] : [])]);
  const encoder = new TextEncoder();
  const store = surveyStore(env, survey.id);
  let after = 0;

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(header));
    },
    async pull(controller) {
      const { rows, more } = await store.completedAfter(after, { limit: EXPORT_PAGE, maxBytes: EXPORT_PAGE_BYTES });
      let chunk = "";
      for (const r of rows) {
        const answers = JSON.parse(r.answers) as Record<string, StoredAnswer>;
        const cells: CsvValue[] = [r.id, r.started_at, r.completed_at, ...questions.map((q) => answerCell(answers[q.id]))];
        if (ai) cells.push(generatedCell(JSON.parse(r.generated_questions), answers));
        chunk += csvRow(cells);
      }
      if (chunk) controller.enqueue(encoder.encode(chunk));
      if (!more) controller.close();
      else after = rows[rows.length - 1]!.seq;
    },
  });
  return { filename: `${survey.slug}-responses.csv`, body };
}
