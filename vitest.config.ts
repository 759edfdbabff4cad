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
