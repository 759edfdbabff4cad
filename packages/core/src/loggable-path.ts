// Portal links and portal sessions carry their signed token in the path (portal-link.ts): a request
// path is logged, a token never is. One rule for every logged path, canonical or not (double slashes,
// other letter case, percent-encoding, a token pasted into some other route): every segment after an
// `open` segment (its token is the one segment the route has; more are a token split by hand), the
// segment after a `portal` one, and any segment that looks like a token anywhere, is replaced.

/** A signed token's MAC (43 base64url characters, after a dot or on its own), an API key or admin
 *  token (`fw_…`, `fwadmin_…`), or a long opaque run. Ids (`job_` and 26 characters) are shorter. */
const TOKEN_LIKE = /\.[A-Za-z0-9_-]{20,}|fw[a-z]*_[A-Za-z0-9_-]{6,}|[A-Za-z0-9_-]{40,}/i;

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function loggablePath(path: string): string {
  let afterPortal = false;
  let afterOpen = false;
  return path
    .split("/")
    .map((segment) => {
      if (segment === "") return segment;
      const plain = decoded(segment);
      const masked = afterOpen || afterPortal || TOKEN_LIKE.test(plain) ? "[token]" : segment;
      const name = plain.toLowerCase();
      afterPortal = name === "portal";
      afterOpen ||= name === "open";
      return masked;
    })
    .join("/");
}
