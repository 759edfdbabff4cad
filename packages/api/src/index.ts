// @fairway/api: the HTTP API (Hono); the runtimes build its dependencies and hand them to createApp,
// and mount the dashboard next to it with the API's command layer (dashboardCommands).
export { Admission } from "./admission.ts";
export { createApp, resolveDeps } from "./app.ts";
export { clientAddress } from "./auth.ts";
export { dashboardCommands, type DashboardCommands } from "./commands/dashboard.ts";
export type { ApiCoordinator, ApiTracing, AppDeps } from "./env.ts";
