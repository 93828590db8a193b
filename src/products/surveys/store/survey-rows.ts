// What a survey's store (survey-store.ts) takes and gives over RPC: a response as it keeps it,
// its owner, the questions its counters follow, an answer's update and the list's filter (the
// JSON chunks its inserts bind are platform/json-chunks.ts's).

/** A response as the store keeps it: JSON columns as text, exactly as the API answers them. */
export interface StoredResponse {
  id: string;
  status: "in_progress" | "completed";
  respondent: string;
  answers: string;
  path: string;
  next_question_id: string | null;
  generated_questions: string;
  completion_id: string | null;
  started_at: string;
  updated_at: string;
  completed_at: string | null;
}

/** Whose store this is: written by the first call, checked by every writing call after it. */
export interface StoreOwner {
  surveyId: string;
  teamId: string;
}

/** One of the survey's current questions, as the counters need it. */
export interface SummaryQuestion {
  id: string;
  type: string;
}

/** The fields an answer or a step back changes, and what the response must still hold for it to apply. */
export interface ResponseUpdate {
  expect: { updatedAt: string; nextQuestionId: string | null; path: string };
  set: { answers: string; path: string; nextQuestionId: string | null; generatedQuestions: string; updatedAt: string };
}

export interface ResponseFilter {
  status?: "in_progress" | "completed";
  since?: string;
  until?: string;
}
