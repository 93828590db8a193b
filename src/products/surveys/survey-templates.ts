// The built-in template catalog of the specification. Templates are listed only; there is no
// endpoint to instantiate one.

export const SURVEY_TEMPLATES = [
  { id: "nps", name: "Net Promoter Score (NPS)", description: "How likely customers are to recommend you, on a 0 to 10 scale, with a follow-up on why." },
  {
    id: "csat",
    name: "Customer Satisfaction (CSAT)",
    description: "How satisfied customers are with a product, purchase or support interaction, on a 1 to 5 rating.",
  },
  {
    id: "ces",
    name: "Customer Effort Score (CES)",
    description: "How easy it was for customers to get something done, such as resolving an issue or completing a task.",
  },
  {
    id: "product-feedback",
    name: "Product Feedback",
    description: "What users like, what is missing and what to build next, with feature ratings and open comments.",
  },
  { id: "onboarding", name: "Onboarding", description: "How new users experienced sign-up and their first steps, and where they got stuck." },
  {
    id: "employee-engagement",
    name: "Employee Engagement",
    description: "How engaged, supported and motivated employees feel at work, for regular pulse checks.",
  },
] as const;
