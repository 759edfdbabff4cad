// CI fails on schema drift: generating migrations from the schema must leave drizzle/
// exactly as committed. (drizzle-kit writes in place; on drift the new migration is left for you to
// review and commit.)
import { execFileSync } from "node:child_process";

const out = execFileSync("npx", ["drizzle-kit", "generate", "--config", "packages/store/drizzle.config.ts"], {
  encoding: "utf8",
  stdio: ["ignore", "pipe", "pipe"],
});
const changed = execFileSync("git", ["status", "--porcelain", "--", "drizzle"], { encoding: "utf8" }).trim();
if (!/No schema changes/i.test(out) || changed) {
  console.error("Schema drift: packages/store/src/schema.ts differs from the committed migrations in drizzle/.");
  console.error("Run `npm run db:generate`, review and commit drizzle/.\n" + out + "\n" + changed);
  process.exit(1);
}
console.log("migrations: no schema drift");
