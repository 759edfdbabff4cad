// FAIRWAY_PORTAL_ORIGINS: the origins that may embed a tenant portal view in an iframe, separated by
// spaces or commas (e.g. "https://app.example.com https://admin.example.com"). Each must be a bare
// origin, since it goes into CSP frame-ancestors as is; anything else is a configuration error.

export function parsePortalOrigins(raw: string | undefined): { ok: true; origins: string[] } | { ok: false; message: string } {
  const parts = (raw ?? "").split(/[\s,]+/).filter(Boolean);
  for (const p of parts) {
    let origin: string | null = null;
    try {
      origin = new URL(p).origin;
    } catch {
      origin = null;
    }
    if (!origin || origin !== p || !/^https?:$/.test(new URL(p).protocol)) {
      return { ok: false, message: `FAIRWAY_PORTAL_ORIGINS: "${p.slice(0, 100)}" is not an origin; write scheme://host[:port] with no path, e.g. https://app.example.com` };
    }
  }
  return { ok: true, origins: parts };
}
