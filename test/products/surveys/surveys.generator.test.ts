// The question generator behind its interface: the configuration picks the provider, Workers AI
// drafts are validated, and anything unusable falls back to the deterministic built-in generator.
import { describe, expect, it } from "vitest";
import { BuiltInGenerator, questionGenerator, validDraft, WorkersAiGenerator, type GeneratorInput } from "../../../src/products/surveys/survey-generator";

const input: GeneratorInput = {
  surveyName: "Support",
  aiConfig: { goal: "Improve support", tone: "formal", target_questions: 4 },
  history: [{ type: "rating", title: "How was support?", options: [], value: 2 }],
};

function fakeAi(response: unknown, calls: unknown[] = []): Ai {
  return {
    run: async (model: string, body: unknown) => {
      calls.push({ model, body });
      if (response instanceof Error) throw response;
      return { response };
    },
  } as unknown as Ai;
}

describe("question generator", () => {
  it("is built-in by default and Workers AI only when configured and bound", () => {
    expect(questionGenerator({}).name).toBe("built-in");
    expect(questionGenerator({ SURVEY_AI_PROVIDER: "workers-ai" }).name).toBe("built-in");
    expect(questionGenerator({ SURVEY_AI_PROVIDER: "workers-ai", AI: fakeAi("{}") }).name).toBe("workers-ai");
  });

  it("built-in reacts to a low rating in the configured tone, deterministically", async () => {
    const a = await new BuiltInGenerator().next(input);
    const b = await new BuiltInGenerator().next(input);
    expect(a).toEqual({
      type: "text",
      title: "Thank you. What is the main reason for your score of 2?",
      description: null,
      options: [],
      settings: { multiline: true },
    });
    expect(b).toEqual(a);
  });

  it("uses a valid Workers AI draft", async () => {
    const calls: unknown[] = [];
    const draft = await new WorkersAiGenerator(fakeAi('Sure! {"type":"choice","title":"Which channel?","options":["chat","email"]}', calls)).next(input);
    expect(draft).toEqual({ type: "choice", title: "Which channel?", description: null, options: ["chat", "email"], settings: {} });
    expect(calls).toHaveLength(1);
  });

  it("falls back to the built-in generator on invalid output or a failed call", async () => {
    const expected = await new BuiltInGenerator().next(input);
    for (const ai of [
      fakeAi("no json here"),
      fakeAi('{"type":"choice","title":"Pick"}'),
      fakeAi('{"type":"poem","title":"x"}'),
      fakeAi(new Error("model down")),
    ]) {
      expect(await new WorkersAiGenerator(ai).next(input)).toEqual(expected);
    }
  });

  it("validates drafts like authored questions", () => {
    expect(validDraft({ type: "scale", title: "How much?", settings: { min: 1, max: 3 } })).not.toBeNull();
    expect(validDraft({ type: "scale", title: "How much?", settings: { min: 3, max: 1 } })).toBeNull();
    expect(validDraft({ type: "text", title: " " })).toBeNull();
  });
});
