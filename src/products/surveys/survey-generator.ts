// AI mode's question generator behind a small interface. The default is a deterministic built-in
// generator that works offline: the same goal, tone and answers always give the same question.
// With SURVEY_AI_PROVIDER=workers-ai and an AI binding, Workers AI drafts the question; anything
// it returns that is not a valid question definition falls back to the built-in one.
import { log } from "../../platform/log";
import type { Env } from "../../env";
import type { JsonObject } from "../../db/schema/surveys";
import { questionDefinitionErrors } from "./survey-rules";
import { QUESTION_TYPES, type QuestionType } from "./surveys.schemas";

export interface GeneratorInput {
  surveyName: string;
  aiConfig: { goal: string; tone: string; target_questions: number };
  /** Questions asked so far, in order, with the respondent's answers. */
  history: Array<{ type: string; title: string; options: string[]; value: unknown }>;
}

export interface QuestionDraft {
  type: QuestionType;
  title: string;
  description: string | null;
  options: string[];
  settings: JsonObject;
}

export interface QuestionGenerator {
  readonly name: string;
  next(input: GeneratorInput): Promise<QuestionDraft>;
}

/** The AI config with its defaults: 5 questions, a neutral tone. */
export function effectiveAiConfig(config: JsonObject): GeneratorInput["aiConfig"] {
  return {
    goal: typeof config.goal === "string" ? config.goal : "",
    tone: typeof config.tone === "string" && config.tone ? config.tone : "neutral",
    target_questions: typeof config.target_questions === "number" ? config.target_questions : 5,
  };
}

const OPENERS: Record<string, string> = { friendly: "Thanks for sharing! ", formal: "Thank you. ", neutral: "" };

/** Follow-ups that do not depend on the last answer, asked in turn. */
const PROBES: Array<(goal: string) => Omit<QuestionDraft, "description">> = [
  (goal) => ({ type: "rating", title: `On a scale of 1 to 5, how well are we doing on this: ${goal}?`, options: [], settings: {} }),
  (goal) => ({ type: "text", title: `What is the one thing we could improve regarding: ${goal}?`, options: [], settings: { multiline: true } }),
  () => ({ type: "yes_no", title: "Would you be happy for us to follow up with you about your answers?", options: [], settings: {} }),
  () => ({ type: "text", title: "Is there anything else you would like to tell us?", options: [], settings: { multiline: true } }),
];

/** Deterministic, offline: reacts to the last answer when it can, else asks the next probe. */
export class BuiltInGenerator implements QuestionGenerator {
  readonly name = "built-in";

  async next(input: GeneratorInput): Promise<QuestionDraft> {
    const opener = OPENERS[input.aiConfig.tone] ?? "";
    const goal = input.aiConfig.goal.replace(/[.?!\s]+$/, "");
    const last = input.history[input.history.length - 1];
    const asked = new Set(input.history.map((h) => h.title));
    const candidates: Array<Omit<QuestionDraft, "description">> = [];
    if (last) {
      const v = last.value;
      if ((last.type === "rating" && typeof v === "number" && v <= 3) || (last.type === "nps" && typeof v === "number" && v <= 6)) {
        candidates.push({ type: "text", title: `${opener}What is the main reason for your score of ${v}?`, options: [], settings: { multiline: true } });
      } else if ((last.type === "rating" && typeof v === "number") || (last.type === "nps" && typeof v === "number")) {
        candidates.push({ type: "text", title: `${opener}What do you value most, given your score of ${v}?`, options: [], settings: { multiline: true } });
      } else if (last.type === "choice" && typeof v === "string") {
        candidates.push({ type: "text", title: `${opener}What made you choose "${v}"?`, options: [], settings: { multiline: true } });
      } else if (last.type === "yes_no" && v === false) {
        candidates.push({ type: "text", title: `${opener}What would need to change for you to answer yes?`, options: [], settings: { multiline: true } });
      }
    }
    for (const probe of PROBES) candidates.push(probe(goal || input.surveyName));
    const pick = candidates.find((c) => !asked.has(c.title)) ?? {
      type: "text" as const,
      title: `Question ${input.history.length + 1}: anything to add about ${goal || input.surveyName}?`,
      options: [],
      settings: { multiline: true },
    };
    return { ...pick, description: null };
  }
}

/** Checks a draft from a model: known type, a title, and a definition valid for that type. */
export function validDraft(raw: unknown): QuestionDraft | null {
  if (!raw || typeof raw !== "object") return null;
  const d = raw as Record<string, unknown>;
  if (typeof d.type !== "string" || !(QUESTION_TYPES as readonly string[]).includes(d.type)) return null;
  if (typeof d.title !== "string" || d.title.trim() === "" || d.title.length > 1000) return null;
  const options = Array.isArray(d.options) && d.options.every((o) => typeof o === "string" && o.length > 0 && o.length <= 500) ? (d.options as string[]) : [];
  const settings = d.settings && typeof d.settings === "object" && !Array.isArray(d.settings) ? (d.settings as JsonObject) : {};
  const draft: QuestionDraft = {
    type: d.type as QuestionType,
    title: d.title.trim(),
    description: typeof d.description === "string" ? d.description : null,
    options: options.slice(0, 20),
    settings,
  };
  return Object.keys(questionDefinitionErrors(draft)).length === 0 ? draft : null;
}

export const WORKERS_AI_MODEL = "@cf/meta/llama-3.1-8b-instruct";

/** Workers AI drafts the next question; invalid output or a failed call falls back to `fallback`. */
export class WorkersAiGenerator implements QuestionGenerator {
  readonly name = "workers-ai";
  constructor(
    private readonly ai: Ai,
    private readonly fallback: QuestionGenerator = new BuiltInGenerator(),
  ) {}

  async next(input: GeneratorInput): Promise<QuestionDraft> {
    const prompt = [
      `You write the next question of a survey named "${input.surveyName}".`,
      `Goal: ${input.aiConfig.goal}. Tone: ${input.aiConfig.tone}.`,
      `Questions so far and answers: ${JSON.stringify(input.history.map((h) => ({ question: h.title, answer: h.value })))}.`,
      `Answer with one JSON object only: {"type": one of ${QUESTION_TYPES.join(", ")}, "title": string, "options": string[] (only for choice, multi_choice, ranking), "settings": object ({"min","max"} integers for scale and slider)}.`,
    ].join("\n");
    try {
      const result = (await (this.ai as unknown as { run(model: string, input: unknown): Promise<unknown> }).run(WORKERS_AI_MODEL, {
        messages: [{ role: "user", content: prompt }],
        max_tokens: 300,
      })) as { response?: unknown };
      const text = typeof result?.response === "string" ? result.response : JSON.stringify(result?.response ?? "");
      const json = /\{[\s\S]*\}/.exec(text)?.[0];
      const draft = json ? validDraft(JSON.parse(json)) : null;
      if (draft) return draft;
    } catch (error) {
      log.error("workers-ai question generation failed", { error: String(error) });
    }
    return this.fallback.next(input);
  }
}

/** The generator selected by configuration: Workers AI only when asked for and bound. */
export function questionGenerator(env: Pick<Env, "AI" | "SURVEY_AI_PROVIDER">): QuestionGenerator {
  if (env.SURVEY_AI_PROVIDER === "workers-ai" && env.AI) return new WorkersAiGenerator(env.AI);
  return new BuiltInGenerator();
}
