import { configDefaults, defineConfig } from "vitest/config";

const all = ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "test/**/*.test.ts"];
// Files that wait or build more than they measure, and assert nothing about timing: a server stopped
// for longer than the misfire grace, CLI and package builds, wrangler and workerd, the embedded
// PostgreSQL, the browser. They run first, two at a time. Everything else, the fairness, fault and
// cluster drills above all, runs after them one file at a time, on an otherwise idle machine.
const alongside = [
  "test/schedules/misfire-restart.test.ts",
  "test/packages/**/*.test.ts",
  "test/edge/**/*.test.ts",
  "test/e2e/embedded.test.ts",
  "test/dashboard/**/*.test.ts",
];

export default defineConfig({
  test: {
    globalSetup: ["test/support/global-setup.ts"],
    // A pool the store replaced after a statement went unanswered (store guarded-client.ts) is destroyed
    // at once; postgres.js then rejects a query of its own (a connection's type lookup) that nothing
    // awaits. The Node server's process guard logs such a driver network error and goes on
    // (apps/server/src/process-guards.ts); the tests do the same for this one code, and nothing else.
    onUnhandledError: (err) => (err as { code?: string }).code !== "CONNECTION_DESTROYED",
    // Waits inside the tests have their own limits; this only ends a test that hangs.
    testTimeout: 90_000,
    hookTimeout: 60_000,
    pool: "forks",
    projects: [
      {
        extends: true,
        test: { name: "alongside", include: alongside, maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: "one-at-a-time",
          include: all,
          exclude: [...configDefaults.exclude, ...alongside],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
