// The OpenAPI 3.1 document, built from the route declarations (route-table.ts) and the named zod
// schemas (components.ts) that validate requests and describe every response. Response schemas become
// components/schemas, and every $ref points there (recursive ones too, through SHARED), so the document
// resolves for client generators. test/api/openapi-document.test.ts validates it; test/packages/
// contract.test.ts validates live responses against it.
import { z } from "zod";
import { BODIES, RESPONSES, SHARED, type ResponseName } from "./components.ts";
import { scopeOf, type Answer, type AnyRoute, type Scope } from "./route.ts";

type Json = Record<string, unknown>;
const REF = "#/components/schemas/";

/** One side (what the API accepts, or what it answers) of the named schemas, each $ref into REF. */
function named(schemas: Record<string, z.ZodType>, io: "input" | "output"): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const [id, s] of Object.entries({ ...SHARED, ...schemas })) registry.add(s, { id });
  const { schemas: out } = z.toJSONSchema(registry, { io, unrepresentable: "any", uri: (id) => REF + id }) as {
    schemas: Record<string, Json>;
  };
  // A sub-schema that recurses without a name would land in __shared, a ref no tool resolves.
  if ("__shared" in out) throw new Error("a recursive schema needs a name in components.ts SHARED");
  return Object.fromEntries(Object.entries(out).map(([id, { $schema: _, $id: _id, ...json }]) => [id, json]));
}

/** A query's fields as query parameters (input side: fields with defaults are optional). */
function queryParameters(query: z.ZodObject): Json[] {
  const json = z.toJSONSchema(query, { io: "input", unrepresentable: "any" }) as {
    properties?: Record<string, Json>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, schema]) => ({
    name,
    in: "query",
    required: json.required?.includes(name) ?? false,
    schema,
  }));
}

const ERRORS: Record<number, string> = {
  400: "Invalid input (validation_error, invalid_json, invalid_text, too_deep, invalid_cron, invalid_timezone, invalid_spread, invalid_key, unknown_secret, unknown_channel, email_unavailable, or a blocked target)",
  401: "Missing or unknown credentials (unauthorized)",
  403: "Credentials not allowed here, or a suspended tenant (forbidden, tenant_suspended)",
  404: "No such resource (not_found)",
  409: "Conflict (tenant_exists, idempotency_conflict, max_jobs_exceeded, not_dead, job_completed, job_failed, job_cancelled, too_many_channels)",
  413: "Payload over the tenant's limit, or body over the server's (payload_too_large)",
  429: "Per-tenant API rate limit (rate_limited); Retry-After says when to try again",
  503: "Not configured on this server (secrets_unavailable: no FAIRWAY_SECRETS_KEY)",
};
const SCOPE_ERRORS: Record<Scope, number[]> = { tenant: [401, 403, 429], admin: [401, 403], open: [] };
const TAGS: Record<Scope, string> = { tenant: "Jobs and triggers", admin: "Admin", open: "Operations" };
const SECURITY: Record<Scope, Json[] | undefined> = {
  tenant: [{ tenantKey: [] }],
  admin: [{ adminToken: [] }],
  open: undefined,
};

const jsonOf = (name: ResponseName) => ({ "application/json": { schema: { $ref: REF + name } } });

function answer(a: Answer): Json {
  if (a.json) return { description: a.description, content: jsonOf(a.json) };
  if (a.text) return { description: a.description, content: { [a.text]: { schema: { type: "string" } } } };
  return { description: a.description };
}

/** "/v1/jobs/:id" → "/v1/jobs/{id}" */
const openApiPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");

function operation(r: AnyRoute, bodies: Record<string, Json>): Json {
  const scope = scopeOf(r.path);
  const names = [...r.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
  const described = Object.keys(r.params ?? {});
  if (names.join() !== described.join()) {
    throw new Error(`${r.method} ${r.path}: describe its path parameters (${names.join(", ")}), in order`);
  }
  const parameters = [
    ...names.map((name) => ({
      name,
      in: "path",
      required: true,
      description: r.params![name],
      schema: { type: "string" },
    })),
    ...(r.query ? queryParameters(r.query) : []),
    ...Object.entries(r.headers ?? {}).map(([name, s]) => {
      const { $schema: _, ...schema } = z.toJSONSchema(s, { io: "input" }) as Json;
      return { name, in: "header", required: false, schema };
    }),
  ];
  const responses: Json = { [r.ok.status]: answer(r.ok) };
  for (const a of r.also ?? []) responses[a.status] = answer(a);
  for (const status of [...(r.scopeErrors ?? SCOPE_ERRORS[scope]), ...(r.errors ?? [])].sort()) {
    responses[status] = { description: ERRORS[status], content: jsonOf("Error") };
  }
  responses.default = {
    description: "Any other failure (internal_error, …): the error envelope",
    content: jsonOf("Error"),
  };
  const op: Json = { tags: [r.tag ?? TAGS[scope]], summary: r.summary };
  if (SECURITY[scope]) op.security = SECURITY[scope];
  op.operationId = r.operationId ?? operationId(r);
  if (parameters.length) op.parameters = parameters;
  if (r.body) {
    // Inline, not a $ref: generators (openapi-typescript) then read a field with a default as optional
    // to send, where a shared component would make it required.
    const schema = bodies[r.body.name];
    const example = r.body.example;
    op.requestBody = {
      required: !r.body.optional,
      content: {
        // PATCH bodies are JSON Merge Patch (RFC 7396); plain application/json is accepted too.
        ...(r.body.mergePatch ? { "application/merge-patch+json": { schema, example } } : {}),
        "application/json": { schema, example },
      },
    };
  }
  op.responses = responses;
  return op;
}

/** A stable name per operation for generated clients: the method and the path's words. */
function operationId(r: AnyRoute): string {
  const words = r.path
    .split("/")
    .filter((p) => p && p !== "v1")
    .map((p) => (p.startsWith(":") ? `by-${p.slice(1)}` : p))
    .flatMap((p) => p.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  return [r.method, ...words].map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join("");
}

export function buildDocument(routes: readonly AnyRoute[]) {
  const { JsonValue: _, ...bodies } = named(BODIES, "input");
  const paths: Record<string, Record<string, Json>> = {};
  const ids = new Set<unknown>();
  for (const r of routes) {
    const at = (paths[openApiPath(r.path)] ??= {});
    if (at[r.method]) throw new Error(`${r.method} ${r.path} is declared twice`);
    at[r.method] = operation(r, bodies);
    if (ids.has(at[r.method].operationId)) throw new Error(`${r.method} ${r.path}: give it its own operationId`);
    ids.add(at[r.method].operationId);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Fairway",
      version: "1",
      description:
        'Multi-tenant, fairness-first job scheduler. Every failure answers `{ "error": { "code", "message", "details"? } }` with a stable code.',
    },
    tags: [
      { name: "Jobs and triggers", description: "With a tenant API key (fw_…)" },
      { name: "Admin", description: "With the admin token" },
      { name: "Operations" },
    ],
    components: {
      securitySchemes: {
        tenantKey: { type: "http", scheme: "bearer", description: "A tenant API key (fw_…)" },
        adminToken: { type: "http", scheme: "bearer", description: "The admin token" },
      },
      schemas: {
        ...named(RESPONSES, "output"),
        // Its own recursion in a component is a type generators cannot write (openapi-typescript's
        // components["schemas"]["JsonValue"] would refer to itself); any JSON value is what it says.
        JsonValue: { description: "Any JSON value" },
      },
    },
    paths,
  };
}
