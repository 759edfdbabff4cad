// The OpenAPI contract, checked on live traffic: a fetch for the SDK that validates every response it
// sees against /openapi.json's schema for that path, method and status (ajv, JSON Schema 2020-12), and
// remembers which operations were seen. A response with no documented schema is a failure too.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { openApiDocument } from "../../packages/api/src/route-table.ts";

type Doc = {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>
  >;
};

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

export interface Contract {
  fetch: typeof fetch;
  /** One line per response that broke the contract. */
  failures: string[];
  /** "METHOD /path/{template} STATUS" of every response validated. */
  seen: Set<string>;
  /** Every documented "METHOD /path/{template}" under /v1. */
  operations(): string[];
}

export function createContract(inner: typeof fetch = fetch): Contract {
  const doc = openApiDocument() as unknown as Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc as object, "openapi");
  const routes = Object.keys(doc.paths).map((template) => ({
    template,
    re: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
  }));
  const failures: string[] = [];
  const seen = new Set<string>();
  const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

  const check = async (method: string, url: URL, res: Response) => {
    const route = routes.find((r) => r.re.test(url.pathname));
    const where = `${method} ${url.pathname} ${res.status}`;
    if (!route) {
      if (res.status === 404) return; // no route at all: nothing to document
      failures.push(`${where}: no documented path`);
      return;
    }
    const op = doc.paths[route.template][method.toLowerCase()];
    if (!op) return void failures.push(`${where}: method not documented for ${route.template}`);
    const status = op.responses[res.status] ? String(res.status) : "default";
    const response = op.responses[status];
    if (response && op.responses[res.status] && !response.content?.["application/json"]) {
      // A documented answer that is not JSON (204, Prometheus text): its status is the contract.
      seen.add(`${method} ${route.template} ${res.status}`);
      return;
    }
    const schema = response?.content?.["application/json"];
    if (!schema) return void failures.push(`${where}: no JSON schema for status ${status}`);
    const validate = ajv.getSchema(
      `openapi#/${pointer("paths", route.template, method.toLowerCase(), "responses", status, "content", "application/json", "schema")}`,
    );
    const body = await res
      .clone()
      .json()
      .catch(() => undefined);
    if (!validate!(body))
      failures.push(`${where}: ${ajv.errorsText(validate!.errors)} in ${JSON.stringify(body).slice(0, 300)}`);
    seen.add(`${method} ${route.template} ${res.status}`);
  };

  return {
    failures,
    seen,
    operations: () =>
      Object.entries(doc.paths)
        .filter(([p]) => p.startsWith("/v1"))
        .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)),
    fetch: async (input, init) => {
      const res = await inner(input, init);
      await check((init?.method ?? "GET").toUpperCase(), new URL(String(input)), res);
      return res;
    },
  };
}
