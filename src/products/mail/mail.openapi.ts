// The route helpers of the mail product's two sections of the document: emails (send, list, read)
// and mail event webhooks. Both carry the team-key requirement and the platform's 401/403/429; the
// mail shapes of 400/404/422 (and the send routes' policy 403/429) stay on the routes that answer them.
import { productRoutes } from "../../platform/openapi";
import { ErrorBody } from "./mail.schemas";

/** `createRoute` of the email routes (sending included). */
export const route = productRoutes({ tags: ["Mail"], security: "bearer", errorBody: ErrorBody });
/** `createRoute` of the mail event webhook routes. */
export const webhookRoute = productRoutes({ tags: ["Mail webhooks"], security: "bearer", errorBody: ErrorBody });
