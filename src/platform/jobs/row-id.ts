// The id a queue message carries: a leaf (zod only) so products' message files, and src/env.ts
// through them, import nothing that imports the environment back.
import { z } from "zod";

/** An id a message body carries (every row id is a UUID); the cap keeps a corrupt body out of the queries. */
export const rowId = z.string().min(1).max(128);
