// One declaration per route: its method and path, what it takes (path parameters, query, headers,
// body) and what it answers, next to its handler. The app registers the handler from it (app.ts), the
// OpenAPI document is built from it (openapi.ts), the fuzz test draws its routes and valid bodies from
// it, and a test fails for any route the app serves that the document lacks.
//
// Adding a route: declare it with route({...}) in the file of its area under routes/, add that file's
// list to ROUTES in route-table.ts if it is a new file, and name its body and answer in components.ts
// when they are new shapes. The path decides who may call it (scopeOf); the declaration documents,
// the handler validates (jsonBody, queryOf, mergePatchBody), so its errors keep the API's envelope.
import type { Context, MiddlewareHandler } from "hono";
import type { z } from "zod";
import type { BodyName, ResponseName } from "./components.ts";
import type { AppEnv } from "./env.ts";

type Method = "get" | "post" | "put" | "patch" | "delete";
/** Who may call: the admin token (/v1/admin/*, /metrics), a tenant key (other /v1/*), or anyone. */
export type Scope = "admin" | "tenant" | "open";

/** A documented answer: a named JSON schema, plain text, HTML, or no content (204). */
export interface Answer {
  status: number;
  description: string;
  json?: ResponseName;
  text?: "text/plain" | "text/html";
}

export interface RouteSpec<P extends string = string> {
  method: Method;
  /** Hono syntax, the full path: "/v1/jobs/:id". */
  path: P;
  summary: string;
  /** One description per :name in the path. */
  params?: Record<string, string>;
  /** The query the handler parses (queryOf): each field becomes a query parameter. */
  query?: z.ZodObject;
  /** Request headers the handler reads. */
  headers?: Record<string, z.ZodType>;
  /** The JSON body the handler parses, by its name in components.ts; mergePatch: a JSON Merge Patch
   *  (application/merge-patch+json or application/json). The example is a valid body (the fuzz test
   *  starts from it). optional: an absent body is {} (the defaults). */
  body?: { name: BodyName; mergePatch?: boolean; optional?: boolean; example: Record<string, unknown> };
  ok: Answer;
  /** Other answers that are not the error envelope (e.g. /healthz's 503). */
  also?: Answer[];
  /** Error statuses this route answers besides its scope's own (401, 403, 429). */
  errors?: number[];
  /** Instead of its scope's own error statuses (a route with its own credential check). */
  scopeErrors?: number[];
  tag?: string;
  /** Default: the method and the path's words (getJobsById); unique across the document. */
  operationId?: string;
  /** Middleware before the handler (e.g. /metrics' token check). */
  use?: MiddlewareHandler<AppEnv>[];
  handler(c: Context<AppEnv, P>): Response | Promise<Response>;
}

/** A route of any path (the table's element type). */
export type AnyRoute = RouteSpec<string>;

/** Declares a route; the path's literal type types the handler's c.req.param. */
export function route<P extends string>(spec: RouteSpec<P>): RouteSpec<P> {
  return spec;
}

/** The credentials a path needs, as app.ts's middleware enforces them. */
export function scopeOf(path: string): Scope {
  if (path.startsWith("/v1/admin/") || path === "/metrics") return "admin";
  if (path.startsWith("/v1/")) return "tenant";
  return "open";
}
