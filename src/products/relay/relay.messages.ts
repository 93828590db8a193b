// The relay product's queue message (webhook-deliveries): a leaf file, so src/env.ts types the
// queue without importing the consumer.
import { rowId } from "../../platform/jobs/row-id";
import { z } from "zod";

/** The body of one webhook-deliveries message: the delivery to attempt. Payloads stay in D1 (128 KB queue cap). */
export const deliveryMessage = z.object({ delivery_id: rowId });
export type DeliveryMessage = z.infer<typeof deliveryMessage>;
