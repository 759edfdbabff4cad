// PATCH bodies are JSON Merge Patch (RFC 7396): absent fields keep their value, nested objects merge,
// null removes a field. The merged whole is then validated with the create schema, so a PATCH is
// checked exactly like a create and its errors name the same fields.
import type { Context } from "hono";
import jsonMergePatch from "json-merge-patch";
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

/** `current` with `patch` merged in; `current` is not modified. */
export function applyMergePatch(current: Patch, patch: Patch): Patch {
  return jsonMergePatch.apply(structuredClone(current), patch) as Patch;
}

export function parseMerged<S extends z.ZodType>(schema: S, merged: unknown): z.infer<S> {
  const r = schema.safeParse(merged);
  if (!r.success) throw fromZod(r.error);
  return r.data;
}
