/** @jsxImportSource hono/jsx */
// What a survey's console page shows of its results: the chart (or words) summarising each
// question's answers, and an answer as one short line of the responses table.
import { BarChart, ColumnChart, SplitBar, type Datum } from "../../../console/charts";
import { TableWrap } from "../../../console/pages/parts";

export type QuestionSummary = Record<string, unknown> & { question_id: string; type: string; title: string; answered: number };

/** The chart (or words) that summarise one question's answers. */
export function QuestionChart(props: { q: QuestionSummary; recent: string[] }) {
  const { q } = props;
  const id = `q-${q.question_id}`;
  if (q.answered === 0) return <p class="muted">No answers yet.</p>;
  const entries = (o: unknown): Datum[] => Object.entries((o ?? {}) as Record<string, number>).map(([label, value]) => ({ label, value }));
  switch (q.type) {
    case "choice":
    case "multi_choice":
      return <BarChart id={id} title={`Answers to “${q.title}”`} data={entries(q.counts)} />;
    case "ranking":
      return <BarChart id={id} title={`First choices for “${q.title}”`} data={entries(q.first_choice_counts)} />;
    case "yes_no":
      return (
        <BarChart
          id={id}
          title={`Yes and no answers to “${q.title}”`}
          data={[
            { label: "Yes", value: Number(q.yes) },
            { label: "No", value: Number(q.no) },
          ]}
        />
      );
    case "nps": {
      const split: Datum[] = [
        { label: "Promoters (9–10)", value: Number(q.promoters), tone: "promoters" },
        { label: "Passives (7–8)", value: Number(q.passives), tone: "passives" },
        { label: "Detractors (0–6)", value: Number(q.detractors), tone: "detractors" },
      ];
      const tone = (v: number) => (v >= 9 ? "promoters" : v >= 7 ? "passives" : "detractors");
      return (
        <>
          <p>
            <span class="big-number" data-testid="nps-score">
              {q.nps === null ? "–" : String(q.nps)}
            </span>{" "}
            <span class="muted">NPS (promoters minus detractors, in % of answers)</span>
          </p>
          <SplitBar id={`${id}-split`} title={`Promoters, passives and detractors for “${q.title}”`} data={split} />
          <ColumnChart id={id} title={`Scores given to “${q.title}”`} data={entries(q.distribution).map((d) => ({ ...d, tone: tone(Number(d.label)) }))} />
        </>
      );
    }
    case "rating":
    case "scale":
    case "slider":
      return (
        <>
          <p>
            <span class="big-number">{q.average === null ? "–" : String(q.average)}</span> <span class="muted">average</span>
          </p>
          {Object.keys((q.distribution ?? {}) as object).length <= 21 ? (
            <ColumnChart id={id} title={`Scores given to “${q.title}”`} data={entries(q.distribution)} />
          ) : null}
        </>
      );
    case "matrix": {
      const counts = (q.counts ?? {}) as Record<string, Record<string, number>>;
      const columns = Object.keys(Object.values(counts)[0] ?? {});
      return (
        <TableWrap label={`Answers to “${q.title}” per row`}>
          <table>
            <caption class="skip">{`Answers to “${q.title}” per row`}</caption>
            <thead>
              <tr>
                <th scope="col">Row</th>
                {columns.map((col) => (
                  <th scope="col">{col}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {Object.entries(counts).map(([row, cols]) => (
                <tr>
                  <th scope="row">{row}</th>
                  {columns.map((col) => (
                    <td>{cols[col] ?? 0}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      );
    }
    default:
      return (
        <>
          <p class="muted small">Latest answers (all of them are in the CSV export):</p>
          <ul class="text-answers">
            {props.recent.map((text) => (
              <li>{text.length > 280 ? `${text.slice(0, 279)}…` : text}</li>
            ))}
          </ul>
        </>
      );
  }
}

/** The latest answers to a question among the responses shown (newest first), at most five. */
export function recentAnswers(rows: Array<{ answers: Record<string, { value: unknown }> }>, questionId: string): string[] {
  return rows
    .map((r) => answerText(r.answers[questionId]?.value))
    .filter(Boolean)
    .slice(0, 5);
}

/** An answer as one short line of the responses table. */
export function answerText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) return value.join(", ");
  if (typeof value === "object")
    return Object.entries(value)
      .map(([k, v]) => `${k}: ${String(v)}`)
      .join(", ");
  return String(value);
}
