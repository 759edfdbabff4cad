// Portal links and portal sessions carry their signed token in the path (portal-link.ts): a request
// path is logged, a token never is. One rule for every logged path, canonical or not (double slashes,
// other letter case, percent-encoding, a token pasted into some other route): a segment after an
// `open` or `portal` segment, and any segment that looks like a token anywhere, is replaced.

/** A signed token's MAC (43 base64url characters after a dot), an API key, or a long opaque run. */
const TOKEN_LIKE = /\.[A-Za-z0-9_-]{20,}|fw_[A-Za-z0-9_-]{6,}|[A-Za-z0-9_-]{64,}/i;

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function loggablePath(path: string): string {
  let afterTokenRoute = false;
  return path
    .split("/")
    .map((segment) => {
      if (segment === "") return segment;
      const plain = decoded(segment);
      const masked = afterTokenRoute || TOKEN_LIKE.test(plain) ? "[token]" : segment;
      const name = plain.toLowerCase();
      afterTokenRoute = name === "open" || name === "portal";
      return masked;
    })
    .join("/");
}
