// postinstall: guard postgres.js 3.4.9 against the crash in porsager/postgres#1154 / #1208 (fix PRs
// #1168 / #1209, unreleased). A buffered write scheduled with setImmediate can run after the connection
// closed and dereference a null socket; the TypeError is thrown from a timer, escapes every try/catch
// and kills the process (our Postgres-outage drill, test/faults, hit it). The guard does what #1209
// does: drop the write and reject the in-flight queries with a catchable CONNECTION_CLOSED.
// Idempotent. packages/store pins postgres exactly; on any other version (or if the patched code moved)
// it warns and skips rather than failing the install. Remove it once a release carries the fix.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// npm workspaces hoist postgres to the root node_modules ("exports" hides its package.json from resolve).
const root = fileURLToPath(new URL("../node_modules/postgres", import.meta.url));
if (!existsSync(join(root, "package.json"))) process.exit(0); // not installed: nothing to patch
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
if (version !== "3.4.9") {
  console.warn(
    `patch-postgres: postgres ${version} is not 3.4.9; not patched. Check whether porsager/postgres#1154 is fixed and update or remove scripts/patch-postgres.mjs`,
  );
  process.exit(0);
}

const MARK = "fairway: guard nextWrite";
const before = "  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)";
const after = `  function nextWrite(fn) {
    if (!socket) { // ${MARK} (porsager/postgres#1154, #1208)
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options, socket))
      return false
    }
    const x = socket.write(chunk, fn)`;

for (const dir of ["src", "cjs/src", "cf/src"]) {
  const file = join(root, dir, "connection.js");
  if (!existsSync(file)) continue;
  const text = readFileSync(file, "utf8");
  if (text.includes(MARK)) continue;
  if (!text.includes(before)) {
    console.warn(`patch-postgres: ${file} does not contain the expected nextWrite; not patched`);
    continue;
  }
  writeFileSync(file, text.replace(before, after));
}
