// Portal links and portal sessions carry their signed token in the path (portal-link.ts): a request
// path is logged, a token never is. Anything after /dashboard/open/ or /dashboard/portal/ up to the
// next slash is replaced.
export function loggablePath(path: string): string {
  return path.replace(/^(\/dashboard\/(?:open|portal)\/)[^/]*/, "$1[token]");
}
