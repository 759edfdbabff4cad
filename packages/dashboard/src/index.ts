// @fairway/dashboard: the web dashboard (operator view, tenant view, tenant portal links), served as
// server-rendered HTML at /dashboard by the apps, next to the API.
export { dashboardApp } from "./app.tsx";
