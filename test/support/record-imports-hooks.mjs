// The resolve hook of record-imports.mjs.
import { appendFileSync } from "node:fs";

export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (process.env.FAIRWAY_IMPORT_LOG) appendFileSync(process.env.FAIRWAY_IMPORT_LOG, `${r.url}\n`);
  return r;
}
