// Request and response schemas of the operator API (docs/OPERATIONS.md "Operator API").
import { z } from "@hono/zod-openapi";
import { PLANS } from "../plans";
import { keyScopeTuple } from "../scopes";

export const TeamSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    plan: z.enum(PLANS),
    owner_email: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("Team");

export const CreateTeamBody = z.object({
  name: z.string().trim().min(1).max(200),
  plan: z.enum(PLANS).default("free"),
  owner_email: z.string().email().max(320).nullable().optional(),
});

export const PatchTeamBody = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  plan: z.enum(PLANS).optional(),
  owner_email: z.string().email().max(320).nullable().optional(),
});

const emailAddress = z.string().email().max(320);

export const MailPolicyInput = z
  .object({
    sandbox: z.boolean().optional(),
    allowed_streams: z
      .array(z.enum(["transactional", "broadcast"]))
      .min(1)
      .max(2)
      .optional(),
    allowed_recipients: z.array(emailAddress).max(100).optional(),
    hourly_cap: z.number().int().min(1).max(1_000_000).nullable().optional(),
    daily_cap: z.number().int().min(1).max(10_000_000).nullable().optional(),
    suspended: z.boolean().optional(),
  })
  .strict();

export const MailPolicySchema = z
  .object({
    sandbox: z.boolean(),
    allowed_streams: z.array(z.string()),
    allowed_recipients: z.array(z.string()),
    hourly_cap: z.number().int().nullable(),
    daily_cap: z.number().int().nullable(),
    suspended: z.boolean(),
  })
  .openapi("KeyMailPolicy");

/** Built when the operator API is (the scopes are the registered products'). */
export const createKeyBody = () =>
  z.object({
    name: z.string().trim().min(1).max(200).optional(),
    scopes: z.array(z.enum(keyScopeTuple())).min(1),
    mail: MailPolicyInput.omit({ suspended: true }).optional(),
  });

export const PatchKeyBody = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  mail: MailPolicyInput.optional(),
});

export const KeySchema = z
  .object({
    id: z.string().uuid(),
    team_id: z.string().uuid(),
    name: z.string().nullable(),
    scopes: z.array(z.string()),
    prefix: z.string(),
    created_at: z.string(),
    mail: MailPolicySchema,
  })
  .openapi("ApiKey");

export const CreatedKeySchema = KeySchema.extend({
  key: z.string().openapi({ description: "The plaintext key. Shown only in this response." }),
}).openapi("CreatedApiKey");

export const IdParam = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });

export const AdminError = z.object({ error: z.string() }).openapi("AdminError");
