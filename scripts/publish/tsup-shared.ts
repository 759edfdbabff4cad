// What the Node packages (worker, cli) bundle into their dist/ rather than depend on: Fairway's own
// workspace packages (not published on their own), and postgres.js with drizzle-orm, because the
// repository installs postgres.js with a guard against a crash upstream has not released a fix for
// (patches/postgres+3.4.9.patch, applied by patch-package) and the bundle carries the guarded code. Everything else is a declared
// dependency of the package.
export const bundled = [/^@fairway\//, /^postgres$/, /^drizzle-orm(\/|$)/];
