// GET /v1/jobs?tag=name:value&tag=…: the jobs with every one of the tags. The first colon ends the
// name; the rest, colons included, is the value.
import { ApiError } from "./errors.ts";
import { TAG_NAME_RE } from "./schemas.ts";

/** The filter as the containment the store matches (`tags @> {…}`); undefined without any tag. */
export function tagFilter(values: readonly string[] | undefined): Record<string, string> | undefined {
  if (!values || values.length === 0) return undefined;
  if (values.length > 10)
    throw new ApiError(400, "validation_error", "tag: at most 10 tags per query (a job has at most 10)");
  const out: Record<string, string> = {};
  for (const v of values) {
    const at = v.indexOf(":");
    const name = at < 0 ? v : v.slice(0, at);
    if (at < 0 || !TAG_NAME_RE.test(name) || v.length - at - 1 > 256)
      throw new ApiError(
        400,
        "validation_error",
        `tag: "${v.slice(0, 80)}" is not name:value; send e.g. tag=env:prod (a name is 1-64 characters of a-z, 0-9, _ . -, a value at most 256 characters)`,
      );
    const value = v.slice(at + 1);
    if (name in out && out[name] !== value)
      throw new ApiError(400, "validation_error", `tag: ${name} is given twice with different values; a job has one`);
    out[name] = value;
  }
  return out;
}
