// The OpenAPI 3.1 document, generated from the same zod schemas that validate requests.
import { z } from "zod";
import { createJobBody, createTenantBody, putPoolBody, updateJobBody, updateTenantBody } from "./schemas.ts";

const schema = (s: z.ZodType) => z.toJSONSchema(s, { io: "input", unrepresentable: "any" });
const body = (s: z.ZodType) => ({ required: true, content: { "application/json": { schema: schema(s) } } });
const ok = (description: string) => ({ description });
const tenant = { security: [{ tenantKey: [] }] };
const admin = { security: [{ adminToken: [] }] };

let cached: unknown = null;

export function openApiDocument() {
  cached ??= {
    openapi: "3.1.0",
    info: { title: "Fairway", version: "1", description: "Multi-tenant, fairness-first job scheduler." },
    components: {
      securitySchemes: {
        tenantKey: { type: "http", scheme: "bearer", description: "A tenant API key (fw_…)" },
        adminToken: { type: "http", scheme: "bearer", description: "The admin token" },
      },
    },
    paths: {
      "/v1/jobs": {
        post: { ...tenant, summary: "Create a job (honours Idempotency-Key)", requestBody: body(createJobBody), responses: { 201: ok("The job") } },
        get: { ...tenant, summary: "List jobs (cursor pagination)", responses: { 200: ok("A page of jobs") } },
      },
      "/v1/jobs/{id}": {
        get: { ...tenant, summary: "A job with its next 5 fires", responses: { 200: ok("The job") } },
        patch: { ...tenant, summary: "Update a job (from its next fire)", requestBody: body(updateJobBody), responses: { 200: ok("The job") } },
        delete: { ...tenant, summary: "Cancel a job and its pending triggers", responses: { 200: ok("The job") } },
      },
      "/v1/jobs/{id}/pause": { post: { ...tenant, summary: "Pause", responses: { 200: ok("The job") } } },
      "/v1/jobs/{id}/resume": { post: { ...tenant, summary: "Resume", responses: { 200: ok("The job") } } },
      "/v1/jobs/{id}/run": { post: { ...tenant, summary: "Fire now", responses: { 201: ok("The trigger") } } },
      "/v1/jobs/{id}/triggers": { get: { ...tenant, summary: "A job's triggers, newest first", responses: { 200: ok("A page") } } },
      "/v1/triggers/{id}": { get: { ...tenant, summary: "A trigger with its attempts", responses: { 200: ok("The trigger") } } },
      "/v1/triggers/{id}/replay": { post: { ...tenant, summary: "Replay a dead letter", responses: { 200: ok("The trigger") } } },
      "/v1/dead-letters": { get: { ...tenant, summary: "Dead letters", responses: { 200: ok("A page") } } },
      "/v1/quota": { get: { ...tenant, summary: "Limits and live usage", responses: { 200: ok("Quota") } } },
      "/v1/admin/tenants": {
        post: { ...admin, summary: "Create a tenant", requestBody: body(createTenantBody), responses: { 201: ok("The tenant and its signing secret") } },
        get: { ...admin, summary: "List tenants", responses: { 200: ok("A page") } },
      },
      "/v1/admin/tenants/{id}": {
        get: { ...admin, summary: "A tenant", responses: { 200: ok("The tenant") } },
        patch: { ...admin, summary: "Update quotas or status", requestBody: body(updateTenantBody), responses: { 200: ok("The tenant") } },
      },
      "/v1/admin/tenants/{id}/keys": { post: { ...admin, summary: "Issue an API key (shown once)", responses: { 201: ok("The key") } } },
      "/v1/admin/tenants/{id}/keys/{keyId}": { delete: { ...admin, summary: "Revoke a key", responses: { 200: ok("Revoked") } } },
      "/v1/admin/tenants/{id}/signing-secret/rotate": { post: { ...admin, summary: "Rotate the signing secret", responses: { 200: ok("The new secret") } } },
      "/v1/admin/tenants/{id}/portal-link": { post: { ...admin, summary: "A signed, short-lived link to the tenant's dashboard view ({ ttlSeconds? }, default 900)", responses: { 201: ok("{ url, expiresAt }") } } },
      "/v1/admin/pools/{type}": {
        get: { ...admin, summary: "Pool config", responses: { 200: ok("The pool") } },
        put: { ...admin, summary: "Set pool config", requestBody: body(putPoolBody), responses: { 200: ok("The pool") } },
      },
      "/v1/admin/stats": { get: { ...admin, summary: "Per-tenant figures", responses: { 200: ok("Stats") } } },
    },
  };
  return cached;
}
