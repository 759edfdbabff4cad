// FAIRWAY_PORTAL_TITLE and FAIRWAY_PORTAL_ACCENT: the name and colour a tenant's portal pages carry, so
// an operator who hands portal links to their own customers can show their product, not Fairway. The
// accent is a hex colour that white text on it, and it as text on white, can be read (WCAG AA, 4.5:1):
// buttons and links take it, so a pale one would fail the pages' contrast.

export interface PortalBrand {
  /** Shown in the portal's header and page titles in place of "Fairway". */
  title: string;
  /** #rrggbb, or null for the dashboard's own. */
  accent: string | null;
}

export const DEFAULT_PORTAL_TITLE = "Fairway";

export function parsePortalBrand(
  title: string | undefined,
  accent: string | undefined,
): { ok: true; brand: PortalBrand } | { ok: false; message: string } {
  const t = (title ?? "").trim();
  if (t.length > 60 || [...t].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f))
    return { ok: false, message: "FAIRWAY_PORTAL_TITLE: at most 60 characters, on one line, e.g. Acme Scheduler" };
  const a = (accent ?? "").trim();
  if (a === "") return { ok: true, brand: { title: t || DEFAULT_PORTAL_TITLE, accent: null } };
  const m = /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.exec(a);
  if (!m)
    return {
      ok: false,
      message: `FAIRWAY_PORTAL_ACCENT: "${a.slice(0, 40)}" is not a hex colour; write #rrggbb, e.g. #0b6e4f`,
    };
  const hex = m[1]!.length === 3 ? [...m[1]!].map((c) => c + c).join("") : m[1]!;
  const ratio = contrastWithWhite(hex);
  if (ratio < 4.5)
    return {
      ok: false,
      message: `FAIRWAY_PORTAL_ACCENT: ${a} on white has a contrast of ${ratio.toFixed(2)}:1, under the 4.5:1 text needs; pick a darker colour`,
    };
  return { ok: true, brand: { title: t || DEFAULT_PORTAL_TITLE, accent: `#${hex.toLowerCase()}` } };
}

/** WCAG 2 contrast ratio of the colour `hex` (rrggbb) against white. */
function contrastWithWhite(hex: string): number {
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  const l = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  return 1.05 / (l + 0.05);
}

/** The portal stylesheet's extra rule: the accent, for pages that link /dashboard/assets/portal.css. */
export function portalCss(brand: PortalBrand): string {
  return brand.accent ? `:root{--accent:${brand.accent}}\n` : "";
}
