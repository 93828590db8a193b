// The survey `settings` schema, owned by the hosted page and the embed widget: theme colours,
// button labels, progress, thank-you text and an optional redirect after completion. Known keys
// are validated; other keys are kept as free-form display settings, as the specification allows.
import { z } from "@hono/zod-openapi";
import { ApiError } from "../../../platform/errors";
import { checkUrl, type SsrfOptions } from "../../../platform/ssrf";
import { FREE_FORM_JSON_BYTES, jsonCapMessage, jsonFits } from "../../../platform/sizes";

/** Named themes; an object theme may start from one (`base`) and override its colours. */
export const THEME_NAMES = ["light", "dark"] as const;
const THEMES: Record<(typeof THEME_NAMES)[number], { primary: string; background: string; text: string }> = {
  light: { primary: "#2457d6", background: "#f6f7fb", text: "#1c1f2a" },
  dark: { primary: "#7aa2ff", background: "#111522", text: "#e8eaf2" },
};

const HexColor = z.string().regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, "must be a hex colour like #1a73e8");
const Label = z.string().trim().min(1).max(40);

export const SurveySettingsSchema = z
  .looseObject({
    theme: z
      .union([
        z.enum(THEME_NAMES),
        z.strictObject({
          base: z.enum(THEME_NAMES).optional(),
          primary_color: HexColor.optional(),
          background_color: HexColor.optional(),
          text_color: HexColor.optional(),
        }),
      ])
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
  .refine((value) => jsonFits(value, FREE_FORM_JSON_BYTES), jsonCapMessage(FREE_FORM_JSON_BYTES))
  .openapi("SurveySettings", {
    description:
      "Display settings of the hosted page and embed: `theme` (`light` or `dark`, or an object with an optional `base` of those and `primary_color`, `background_color`, `text_color` as hex), `button_labels` (`start`, `next`, `back`, `submit`, up to 40 characters), `show_progress` (default true), `thank_you_message`, `redirect_url` (https, no private or internal address) and `redirect_delay_seconds` (0..30, default 3). Other keys are stored as given; at most 16 KB of JSON in all.",
  });

export type SurveySettings = z.infer<typeof SurveySettingsSchema>;

export interface ResolvedSettings {
  dark: boolean;
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
  const theme = typeof s.theme === "string" ? { base: s.theme } : (s.theme ?? {});
  const base = THEMES[theme.base ?? "light"];
  return {
    dark: theme.base === "dark",
    primary: theme.primary_color ?? base.primary,
    background: theme.background_color ?? base.background,
    text: theme.text_color ?? base.text,
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
