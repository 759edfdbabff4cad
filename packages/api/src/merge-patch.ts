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

/** `current` with `patch` merged in; `current` is not modified. Written out (RFC 7396 §2) rather than
 *  taken from json-merge-patch, which calls `target.hasOwnProperty` and so throws when a document has
 *  its own "hasOwnProperty" field, and stops at a "__proto__" one: here every name is plain data. */
export function applyMergePatch(current: Patch, patch: Patch): Patch {
  return mergeValue(current, patch) as Patch;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function mergeValue(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = {};
  const set = (k: string, v: unknown) =>
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  if (isObject(target)) for (const [k, v] of Object.entries(target)) set(k, structuredClone(v));
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else set(k, mergeValue(Object.hasOwn(out, k) ? out[k] : undefined, v));
  }
  return out;
}

export function parseMerged<S extends z.ZodType>(schema: S, merged: unknown): z.infer<S> {
  const r = schema.safeParse(merged);
  if (!r.success) throw fromZod(r.error);
  return r.data;
}
