// Zod schemas of the audit scan API: bodies, queries and the scan and schedule resources.
import { z } from "@hono/zod-openapi";
import { SCAN_EVERY, SCAN_STATUSES } from "../../db/schema/audit";
import { ProjectParams } from "./audit.schemas";

export const ScanParams = ProjectParams.extend({ id: z.string().max(64) });

const TargetUrl = z.string().openapi({
  description:
    "The page to scan: https (http only where private targets are allowed), no credentials, not a private, loopback, link-local or metadata address, not this platform's own host. Stored in the URL parser's form (lower-case host, `/` path at least, no fragment).",
  example: "https://example.com/",
});

export const StartScanBody = z.object({ target_url: TargetUrl }).openapi("StartScan");

export const ScanTest = z
  .object({
    name: z.string().openapi({ example: "strict-transport-security" }),
    pass: z.boolean(),
    result: z.string().openapi({ example: "hsts-not-implemented" }),
    score_modifier: z.number().int(),
    description: z.string().openapi({ description: "What the result means and what to fix." }),
    data: z
      .unknown()
      .optional()
      .openapi({ description: "What the test read: a header (cut to 256 characters), cookie names and flags (never values), the http:// answer." }),
  })
  .openapi("ScanTest");

export const Scan = z
  .object({
    id: z.string(),
    org_id: z.string(),
    project_id: z.string(),
    target_url: z.string(),
    status: z.enum(SCAN_STATUSES),
    score: z.number().int().nullable().openapi({ description: "100 plus the tests' modifiers (bonuses only from 90), at least 0; set when finished." }),
    grade: z.string().nullable().openapi({ description: "A+ to F, the MDN HTTP Observatory's scale; set when finished." }),
    tests: z.array(ScanTest),
    error: z.string().nullable().openapi({ description: "Why a `failed` scan failed: timeout, DNS failure, forbidden hop, redirect loop, connection failed." }),
    final_url: z.string().nullable().openapi({ description: "The address the graded answer came from, after redirects." }),
    status_code: z.number().int().nullable(),
    schedule_id: z.string().nullable(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .openapi("Scan");

export const ListScansQuery = z.object({
  target_url: z.string().max(2048).optional().openapi({ description: "Only scans of this target (compared in its stored form)." }),
  page: z.coerce.number().int().min(1).default(1),
  per_page: z.coerce.number().int().min(1).max(100).default(20),
});

export const CreateScheduleBody = z.object({ target_url: TargetUrl, every: z.enum(SCAN_EVERY) }).openapi("CreateScanSchedule");

export const Schedule = z
  .object({
    id: z.string(),
    org_id: z.string(),
    project_id: z.string(),
    target_url: z.string(),
    every: z.enum(SCAN_EVERY),
    next_run_at: z.string().openapi({ description: "When the hourly run next queues a scan (the first: the next run after creation)." }),
    last_grade: z.string().nullable(),
    last_scan_id: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("ScanSchedule");
