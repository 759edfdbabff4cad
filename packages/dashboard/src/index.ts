// @fairway/dashboard: the web dashboard (operator view, tenant view, tenant portal links), served by
// the API app at /dashboard as server-rendered HTML.
export { dashboardApp } from "./app.tsx";
export type { DashboardCommands } from "./deps.ts";
export {
  createPortalLink,
  PORTAL_LINK_DEFAULT_TTL_S,
  PORTAL_LINK_MAX_TTL_S,
  PORTAL_LINK_MIN_TTL_S,
} from "./portal-link.ts";
export { parsePortalOrigins } from "./portal-origins.ts";
export { parsePortalBrand, type PortalBrand } from "./portal-brand.ts";
export { publicOrigin } from "./public-origin.ts";
export { loggablePath } from "./loggable-path.ts";
