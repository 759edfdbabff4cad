// The HTTP app the Node server runs: the API (packages/api) with the dashboard (packages/dashboard)
// mounted at /dashboard, which changes state only through the API's command layer.
import { clientAddress, createApp, dashboardCommands, resolveDeps, type AppDeps } from "@fairway/api";
import { dashboardApp } from "@fairway/dashboard";

export function serverApp(input: AppDeps, dashboard: { traceUrlTemplate?: string } = {}) {
  const deps = resolveDeps(input);
  const app = createApp(deps);
  app.route(
    "/dashboard",
    dashboardApp({
      ...deps,
      commands: dashboardCommands(deps),
      clientAddress,
      traced: deps.tracing !== undefined,
      traceUrlTemplate: dashboard.traceUrlTemplate,
    }),
  );
  return app;
}
