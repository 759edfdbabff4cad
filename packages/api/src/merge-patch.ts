// PATCH bodies are JSON Merge Patch (RFC 7396): absent fields keep their value, nested objects merge,
// null removes a field. The merged whole is then validated with the create schema, so a PATCH is
// checked exactly like a create and its errors name the same fields.
import type { Context } from "hono";
import type { z } from "zod";
import { ApiError, fromZod } from "./errors.ts";
import { rawJsonBody } from "./validate.ts";

export type Patch = Record<string, unknown>;

/** The request body as a merge patch: a JSON object (a non-object would replace the whole resource). */
export async function mergePatchBody(c: Context): Promise<Patch> {
  const raw = await rawJsonBody(c);
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new ApiError(
      400,
      "validation_error",
      "the body must be a JSON object of the fields to change (JSON Merge Patch: absent fields keep their value, null clears one)",
    );
  }
  return raw as Patch;
}

const isObject = (v: unknown): v is Patch => v !== null && typeof v === "object" && !Array.isArray(v);

/** An own, plain data property, whatever the key: `__proto__` and `constructor` are stored as keys
 *  like any other (an assignment would set the prototype or be shadowed), so the strict schema sees
 *  them and refuses them by name, exactly as a create does. */
function define(o: Patch, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** RFC 7396 over fresh objects: `current` and `patch` are not modified, and no key is dropped or
 *  turned into a prototype (the json-merge-patch package skips `__proto__` and `constructor`, which
 *  made such a PATCH a silent no-op). */
export function applyMergePatch(current: unknown, patch: unknown): Patch {
  return merge(current, patch, true) as Patch;
}

function merge(target: unknown, patch: unknown, top: boolean): unknown {
  if (!isObject(patch)) return patch;
  const out: Patch = {};
  if (isObject(target)) for (const k of Object.keys(target)) define(out, k, target[k]);
  for (const k of Object.keys(patch)) {
    const v = patch[k];
    if (v !== null) define(out, k, merge(Object.hasOwn(out, k) ? out[k] : undefined, v, false));
    else if (Object.hasOwn(out, k)) delete out[k];
    // Clearing a top-level field the resource does not have: kept as undefined, so the strict
    // schema still names an unknown one (an optional known field reads as absent).
    else if (top) define(out, k, undefined);
  }
  return out;
}

export function parseMerged<S extends z.ZodType>(schema: S, merged: unknown): z.infer<S> {
  const r = schema.safeParse(merged);
  if (!r.success) throw fromZod(r.error);
  return r.data;
}
