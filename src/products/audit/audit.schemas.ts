// Zod schemas of the audit API: path params, request bodies, the envelope and every resource.
import { z } from "@hono/zod-openapi";
import { FINDING_SOURCES, FINDING_STATUSES, REPORT_FORMATS, REPORT_STATUSES } from "../../db/schema/audit";
import { SCAN_TESTS } from "./audit-scan.results";

export const SHARE_CHANNELS = ["email", "chat", "link"] as const;
export type ShareChannel = (typeof SHARE_CHANNELS)[number];

/** A project identifier: free text chosen by the caller, kept URL- and file-name-safe. */
export const PROJECT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export const ProjectParams = z.object({
  org_id: z.string().openapi({ description: "The caller's team id; any other value answers 404 `not_found`." }),
  project_id: z
    .string()
    .regex(PROJECT_ID, "must be 1 to 128 characters: letters, digits, '.', '_', ':' or '-', starting with a letter or digit")
    .openapi({ description: "Free project identifier (1–128 of `A-Z a-z 0-9 . _ : -`)." }),
});

export const FindingParams = ProjectParams.extend({ id: z.string().max(64) });
export const ReportParams = ProjectParams.extend({ id: z.string().max(64) });

/** `YYYY-MM-DD` that is a real calendar date. */
export const IsoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "must be an ISO date (YYYY-MM-DD)")
  .refine((value) => {
    const date = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
  }, "must be a real calendar date");

// ---- envelope -------------------------------------------------------------------------------

export const Meta = z.object({ request_id: z.string() }).openapi("AuditMeta");

export const AuditErrorSchema = z
  .object({
    data: z.null(),
    meta: Meta,
    error: z.object({
      code: z.string().openapi({ example: "invalid_params" }),
      message: z.string(),
      details: z.record(z.string(), z.array(z.string())).optional(),
    }),
  })
  .openapi("AuditError");

/** `{data, meta: {request_id}, error: null}` around a schema. */
export function envelope<T extends z.ZodType>(schema: T) {
  return z.object({ data: schema, meta: Meta, error: z.null() });
}

// ---- findings -------------------------------------------------------------------------------

const Title = z.string().trim().min(1, "must not be empty").max(500);
const Priority = z.number().finite().min(0).max(1_000_000);

export const CreateFindingBody = z
  .object({
    title: Title,
    priority_score: Priority.default(0).openapi({ description: "Weight in the risk burn-down; default 0." }),
    status: z.enum(FINDING_STATUSES).default("new"),
    target_url: z.string().max(2048).optional().openapi({
      description: "With `test`: the scanned target this finding is about; scans of it then keep, close and reopen this finding instead of opening their own.",
    }),
    test: z.enum(SCAN_TESTS).optional().openapi({ description: "With `target_url`: the scan test this finding is about." }),
  })
  .refine((body) => (body.target_url === undefined) === (body.test === undefined), { message: "give both target_url and test, or neither", path: ["test"] })
  .openapi("CreateFinding");

export const PatchFindingBody = z
  .object({ title: Title, priority_score: Priority, status: z.enum(FINDING_STATUSES) })
  .partial()
  .refine((body) => Object.keys(body).length > 0, "give at least one of title, priority_score, status")
  .openapi("PatchFinding");

export const ListFindingsQuery = z.object({
  status: z.enum(FINDING_STATUSES).optional(),
  page: z.coerce.number().int().min(1).default(1),
  per_page: z.coerce.number().int().min(1).max(100).default(50),
});

export const StatusChange = z
  .object({ from: z.enum(FINDING_STATUSES).nullable(), to: z.enum(FINDING_STATUSES), priority_score: z.number(), at: z.string() })
  .openapi("FindingStatusChange");

export const Finding = z
  .object({
    id: z.string(),
    org_id: z.string(),
    project_id: z.string(),
    title: z.string(),
    priority_score: z.number(),
    status: z.enum(FINDING_STATUSES),
    regression: z.boolean().openapi({ description: "True while the finding is an open regression (reopened after a terminal status)." }),
    source: z.enum(FINDING_SOURCES).openapi({ description: "`manual` (a person) or `scan` (opened by a scan run)." }),
    target_url: z.string().nullable().openapi({ description: "The scanned target the finding is about (scan findings, or a person's finding given one)." }),
    test: z.string().nullable().openapi({ description: "The scan test the finding is about." }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Finding");

export const Verification = z
  .object({ id: z.string(), finding_id: z.string(), result: z.enum(["passed", "failed"]), note: z.string().nullable(), created_at: z.string() })
  .openapi("Verification");

export const FindingDetail = Finding.extend({ status_history: z.array(StatusChange), verifications: z.array(Verification) }).openapi("FindingDetail");

export const CreateVerificationBody = z.object({ result: z.enum(["passed", "failed"]), note: z.string().max(2000).optional() }).openapi("CreateVerification");

export const Pagination = z.object({ page: z.number(), per_page: z.number(), total: z.number(), total_pages: z.number() });
export const ListMeta = Meta.extend({ pagination: Pagination });

// ---- summary and reports --------------------------------------------------------------------

export const SummaryQuery = z.object({
  date_from: z.string().optional().openapi({ description: "Accepted and ignored." }),
  date_to: z.string().optional().openapi({ description: "Accepted and ignored." }),
});

export const Summary = z
  .object({
    risk_burn_down: z.array(z.object({ date: z.string(), open_risk_score: z.number() })).length(7),
    verification_pass_rate: z.number(),
    regression_rate: z.number(),
    open_findings: z.number().int(),
  })
  .openapi("ReportSummary");

export const ExportBody = z
  .object({
    format: z.enum(REPORT_FORMATS).default("pdf"),
    period_start: IsoDate.optional().openapi({ description: "Default: 6 days before today (UTC)." }),
    period_end: IsoDate.optional().openapi({ description: "Default: today (UTC)." }),
  })
  .openapi("ExportReport");

export const Report = z
  .object({
    id: z.string(),
    org_id: z.string(),
    project_id: z.string(),
    period_start: z.string(),
    period_end: z.string(),
    format: z.enum(REPORT_FORMATS),
    status: z.enum(REPORT_STATUSES),
    snapshot: Summary,
    exported_at: z.string().nullable(),
    shared_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("ReportExportRecord");

export const ListReportsQuery = z.object({
  status: z.enum(REPORT_STATUSES).optional(),
  page: z.coerce.number().int().min(1).default(1),
  per_page: z.coerce.number().int().min(1).max(100).default(20),
});

// Channel, recipients and webhook_url are checked in the handler: an unknown channel is
// `invalid_channel` (not `invalid_params`), and fields a channel ignores must not fail it.
export const ShareBody = z
  .object({
    channel: z
      .any()
      .optional()
      .openapi({ type: "string", enum: [...SHARE_CHANNELS], description: "Required: `email`, `chat` or `link`." }),
    report_id: z.string().max(64).optional().openapi({ description: "Default: the project's most recent report." }),
    recipients: z
      .any()
      .optional()
      .openapi({ type: "array", items: { type: "string" }, description: "Channel `email`: 1 to 10 addresses." }),
    webhook_url: z.any().optional().openapi({ type: "string", description: "Channel `chat`: the incoming-webhook URL." }),
  })
  .openapi("ShareReport");

export const ShareResult = z
  .object({
    id: z.string(),
    channel: z.enum(SHARE_CHANNELS),
    recipients: z.array(z.string()),
    accepted: z.array(z.string()),
    rejected: z.array(z.string()),
    shared_at: z.string(),
    share_url: z.string(),
  })
  .openapi("ShareResult");

export const RevokeResult = z
  .object({
    status: z.literal("exported"),
    revoked_count: z.number().int(),
    ids: z.array(z.string()),
    id: z.string().openapi({ description: "The most recently shared of the revoked reports." }),
  })
  .openapi("RevokeResult");
