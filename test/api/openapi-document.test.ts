// The OpenAPI document against the tools users point at an API, offline: every route the app serves is
// in it, @apidevtools/swagger-parser validates it (every $ref resolves), and openapi-typescript turns
// it into types that a strict tsc accepts for the README's quickstart requests and that agree with
// the SDK's own types.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "@fairway/api";
import { createMemoryCoordinator } from "@fairway/coord";
import type { Db } from "@fairway/store";
import { openApiDocument } from "../../packages/api/src/route-table.ts";

const doc = () => structuredClone(openApiDocument()) as ReturnType<typeof openApiDocument>;
const dir = mkdtempSync(join(tmpdir(), "fairway-openapi-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the OpenAPI document", () => {
  it("documents every route the app registers", () => {
    // Registration only: no request is made, so no database is needed.
    const app = createApp({
      db: {} as Db,
      coordinator: createMemoryCoordinator(),
      adminToken: "fwadmin_document_test_token",
      allowPrivateTargets: false,
    });
    const registered = new Set(
      app.routes
        // Middleware (ALL), the dashboard's HTML pages and the browser's redirects (/, /favicon.ico)
        // are not API operations.
        .filter(
          (r) => r.method !== "ALL" && !r.path.startsWith("/dashboard") && r.path !== "/" && r.path !== "/favicon.ico",
        )
        .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`),
    );
    const documented = new Set(
      Object.entries(doc().paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)),
    );
    expect([...registered].filter((r) => !documented.has(r))).toEqual([]);
    expect([...documented].filter((d) => !registered.has(d))).toEqual([]);
    expect(registered.size).toBeGreaterThan(40);
  });

  it("validates with @apidevtools/swagger-parser, every $ref resolving", async () => {
    const parsed = (await SwaggerParser.validate(doc() as never)) as { paths: Record<string, unknown> };
    expect(Object.keys(parsed.paths)).toContain("/v1/jobs/{id}");
    // Every $ref points into the document's own components.
    const refs = JSON.stringify(doc()).match(/"\$ref":"[^"]*"/g) ?? [];
    expect(refs.length).toBeGreaterThan(50);
    expect(refs.filter((r) => !r.startsWith('"$ref":"#/components/schemas/'))).toEqual([]);
  });

  it("generates types with openapi-typescript that a strict tsc accepts for the README's calls", async () => {
    writeFileSync(join(dir, "api.ts"), astToString(await openapiTS(doc() as never)));
    const sdk = resolve(import.meta.dirname, "../../packages/sdk/src/index.ts");
    writeFileSync(join(dir, "calls.ts"), typedCalls(sdk));
    const program = ts.createProgram([join(dir, "calls.ts")], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      allowImportingTsExtensions: true,
      lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
      types: [],
      skipLibCheck: true,
    });
    const errors = ts
      .getPreEmitDiagnostics(program)
      .map(
        (d) => `${d.file?.fileName.replace(dir, "") ?? ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`,
      );
    expect(errors).toEqual([]);
  }, 60_000);
});

/** The README's quickstart requests, typed with the generated `paths`; and the SDK's types against
 *  them: what the API answers must fit what the SDK promises, and what the SDK sends the API takes. */
function typedCalls(sdk: string): string {
  return `
import type { paths } from "./api.ts";
import type { createAdminClient, createClient } from ${JSON.stringify(sdk)};

type Ops = { [P in keyof paths]: Omit<paths[P], "parameters"> };
type Op<P extends keyof paths, M extends keyof Ops[P]> = Ops[P][M];
type Body<P extends keyof paths, M extends keyof Ops[P]> = Op<P, M> extends {
  requestBody?: { content: { "application/json": infer B } };
}
  ? B
  : never;
type Answer<P extends keyof paths, M extends keyof Ops[P], S extends number> = Op<P, M> extends {
  responses: { [K in S]: { content: { "application/json": infer R } } };
}
  ? R
  : never;
type Fits<A, B> = [A] extends [B] ? true : false;
const yes = <T extends true>(t: T) => t;

// README quickstart, request by request.
const tenant: Body<"/v1/admin/tenants", "post"> = { id: "acme", name: "Acme", maxInFlight: 5 };
const oneTime: Body<"/v1/jobs", "post"> = {
  name: "hello",
  schedule: { delayMs: 0 },
  target: { url: "http://127.0.0.1:9000/hook" },
  payload: { hi: 1 },
};
const daily: Body<"/v1/jobs", "post"> = {
  name: "daily-report",
  schedule: { cron: "0 9 * * *", timezone: "Europe/Berlin" },
  target: { url: "http://127.0.0.1:9000/report" },
};
const moved: Body<"/v1/jobs/{id}", "patch"> = { schedule: { cron: "30 7 * * *" } };
// @ts-expect-error a delay is a number, not a string: the generated types are not "any"
const wrong: Body<"/v1/jobs", "post"> = { name: "x", schedule: { delayMs: "0" } };
declare const created: Answer<"/v1/admin/tenants", "post", 201>;
declare const key: Answer<"/v1/admin/tenants/{id}/keys", "post", 201>;
declare const secret: Answer<"/v1/admin/tenants/{id}/signing-secret", "get", 200>;
declare const job: Answer<"/v1/jobs", "post", 201>;
declare const triggers: Answer<"/v1/jobs/{id}/triggers", "get", 200>;
declare const trigger: Answer<"/v1/triggers/{id}", "get", 200>;
const read: string[] = [created.signingSecret, key.key, secret.signingSecret, job.id, triggers.data[0].id, trigger.status];
void [tenant, oneTime, daily, moved, wrong, read];

// The SDK: its inputs are bodies the API takes; the API's answers are what its methods promise.
type Client = ReturnType<typeof createClient>;
type Admin = ReturnType<typeof createAdminClient>;
type Returns<F extends (...a: never[]) => unknown> = Awaited<ReturnType<F>>;
yes<Fits<Parameters<Admin["tenants"]["create"]>[0], Body<"/v1/admin/tenants", "post">>>(true);
yes<Fits<Answer<"/v1/admin/tenants", "post", 201>, Returns<Admin["tenants"]["create"]>>>(true);
yes<Fits<Answer<"/v1/admin/tenants/{id}/keys", "post", 201>, Returns<Admin["tenants"]["createKey"]>>>(true);
yes<Fits<Answer<"/v1/admin/tenants/{id}/signing-secret", "get", 200>, Returns<Admin["tenants"]["signingSecret"]>>>(true);
yes<Fits<Answer<"/v1/jobs/{id}", "get", 200>, Returns<Client["jobs"]["get"]>>>(true);
yes<Fits<Answer<"/v1/jobs", "get", 200>, Returns<Client["jobs"]["list"]>>>(true);
yes<Fits<Answer<"/v1/jobs/{id}/run", "post", 201>, Returns<Client["jobs"]["run"]>>>(true);
yes<Fits<Answer<"/v1/triggers/{id}", "get", 200>, Returns<Client["triggers"]["get"]>>>(true);
yes<Fits<Answer<"/v1/quota", "get", 200>, Returns<Client["quota"]>>>(true);
`;
}
