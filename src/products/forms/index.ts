// The Forms product's definition: everything registering it needs, in one place (routers and
// where they mount, the store's Durable Object class, scopes, the document's tags, the console's
// page group and nav entry). Forms has no queue consumer and no cron job: its store's alarm sends
// the webhook deliveries and applies the retention (store/form-store.ts).
export { formsRouter } from "./forms.routes";
export { formsPublicRouter } from "./forms.public.routes";
export { FormStore } from "./store/form-store";
export { forms } from "./forms.tables";
export { formsPages, FORMS_NAV } from "./console/forms-pages";

/** Where each router mounts: the API under /api/v1/forms, the public endpoint at /f. */
export const FORMS_MOUNTS = { api: "/forms", public: "/f" } as const;

/** The product's scopes: `forms:write` includes `forms:read`. */
export const FORMS_SCOPES = ["forms:read", "forms:write"] as const;

/** The usage service and its metric (plans.ts holds the limits per plan). */
export const FORMS_USAGE = { service: "forms", metric: "submissions" } as const;

/** Queue consumers and cron jobs: none (the store's alarm does both jobs). */
export const formsConsumers = [] as const;
export const formsCrons = [] as const;

/** The reference's sections of the product, in reading order. */
export const FORMS_DOCUMENT_TAGS = [
  {
    name: "Forms",
    description: "Forms any HTML page can post to: fields, origins, redirects, notification mail, signed webhooks, files; submissions, spam and CSV export.",
  },
  { name: "Forms (public)", description: "`POST /f/:form_id` from any HTML form or fetch: no credential, counted per client IP and per form and network." },
] as const;
