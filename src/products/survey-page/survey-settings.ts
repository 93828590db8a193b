// The survey `settings` schema, owned by the hosted page and the embed widget: theme colours,
// button labels, progress, thank-you text and an optional redirect after completion. Known keys
// are validated; other keys are kept as free-form display settings, as the specification allows.
import { z } from "@hono/zod-openapi";
import { ApiError } from "../../platform/errors";
import { checkUrl, type SsrfOptions } from "../../platform/ssrf";

const HexColor = z.string().regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, "must be a hex colour like #1a73e8");
const Label = z.string().trim().min(1).max(40);

export const SurveySettingsSchema = z
  .looseObject({
    theme: z
      .strictObject({
        primary_color: HexColor.optional(),
        background_color: HexColor.optional(),
        text_color: HexColor.optional(),
      })
      .optional(),
    button_labels: z
      .strictObject({
        start: Label.optional(),
        next: Label.optional(),
        back: Label.optional(),
        submit: Label.optional(),
      })
      .optional(),
    show_progress: z.boolean().optional(),
    thank_you_message: z.string().trim().min(1).max(1000).optional(),
    redirect_url: z.string().max(2000).optional().openapi({ description: "https URL opened after completion; must pass the SSRF rules" }),
    redirect_delay_seconds: z.number().int().min(0).max(30).optional(),
  })
  .openapi("SurveySettings", {
    description:
      "Display settings of the hosted page and embed: `theme` (`primary_color`, `background_color`, `text_color` as hex), `button_labels` (`start`, `next`, `back`, `submit`, up to 40 characters), `show_progress` (default true), `thank_you_message`, `redirect_url` (https, no private or internal address) and `redirect_delay_seconds` (0..30, default 3). Other keys are stored as given.",
  });

export type SurveySettings = z.infer<typeof SurveySettingsSchema>;

export interface ResolvedSettings {
  primary: string;
  background: string;
  text: string;
  labels: { start: string; next: string; back: string; submit: string };
  showProgress: boolean;
  thankYou: string;
  redirectUrl: string | null;
  redirectDelay: number;
}

/** Settings with defaults applied; anything stored that no longer validates falls back to defaults. */
export function resolveSettings(raw: unknown): ResolvedSettings {
  const parsed = SurveySettingsSchema.safeParse(raw ?? {});
  const s: SurveySettings = parsed.success ? parsed.data : {};
  return {
    primary: s.theme?.primary_color ?? "#2457d6",
    background: s.theme?.background_color ?? "#f6f7fb",
    text: s.theme?.text_color ?? "#1c1f2a",
    labels: {
      start: s.button_labels?.start ?? "Start",
      next: s.button_labels?.next ?? "Next",
      back: s.button_labels?.back ?? "Back",
      submit: s.button_labels?.submit ?? "Submit",
    },
    showProgress: s.show_progress ?? true,
    thankYou: s.thank_you_message ?? "Thank you! Your response has been recorded.",
    redirectUrl: s.redirect_url ?? null,
    redirectDelay: s.redirect_delay_seconds ?? 3,
  };
}

/**
 * Checks what the schema cannot: the redirect URL against the SSRF rules of this deployment
 * (https, no private or internal address). Throws the 422 validation error of the surveys product.
 */
export function assertSettingsUrls(settings: SurveySettings | undefined, options: SsrfOptions): void {
  if (!settings?.redirect_url) return;
  const reason = checkUrl(settings.redirect_url, options);
  if (reason) throw ApiError.validation({ "settings.redirect_url": [reason] });
}
