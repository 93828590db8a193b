// The Forms product's definition: everything the platform serves of it, declared once
// (docs/ARCHITECTURE.md "Adding a product"); src/products/index.ts lists it. Forms has no queue
// consumer and no cron job: its store's alarm sends the webhook deliveries and applies the
// retention (store/form-store.ts).
import { defineProduct } from "../../platform/products";
import { formsPages, FORMS_NAV } from "./console/forms-pages";
import { formsPublicRouter } from "./forms.public.routes";
import { formsRouter } from "./forms.routes";
import { FormStore } from "./store/form-store";

export { FormStore };

declare module "../../platform/scopes" {
  interface ProductScopes {
    "forms:read": true;
    "forms:write": true;
  }
}
declare module "../../platform/plans" {
  interface ProductServices {
    forms: true;
  }
}

export const formsProduct = defineProduct({
  name: "forms",
  mounts: [
    { prefix: "/api/v1/forms", router: formsRouter },
    // The public endpoint (POST /f/:form_id) and the hosted thank-you page.
    { prefix: "/f", router: formsPublicRouter },
  ],
  console: { pages: formsPages, nav: FORMS_NAV },
  durableObjects: { FormStore },
  scopes: { label: "Forms", names: ["forms:read", "forms:write"], implied: { "forms:write": ["forms:read"] } },
  services: {
    forms: {
      metric: "submissions",
      label: "Form submissions",
      unit: "submissions",
      limits: { free: 1_000, starter: 10_000, pro: 50_000, scale: 250_000, enterprise: null },
      visibleTo: ["forms:read", "forms:write"],
    },
  },
  tags: [
    {
      name: "Forms",
      description: "Forms any HTML page can post to: fields, origins, redirects, notification mail, signed webhooks, files; submissions, spam and CSV export.",
    },
    { name: "Forms (public)", description: "`POST /f/:form_id` from any HTML form or fetch: no credential, counted per client IP and per form and network." },
  ],
});
