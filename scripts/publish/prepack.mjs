// `npm pack` / `npm publish` of a public package (its "prepack"): build dist/ with tsup, then swap the
// package.json that development uses (exports pointing at src/*.ts, so tests and typecheck need no
// build) for the published one — the fields under "publishConfig" lifted to the top. postpack.mjs
// puts the development manifest back. npm packs the package.json on disk after prepack has run.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const LIFTED = ["main", "types", "exports", "bin"];
const dir = process.cwd();
const manifestFile = `${dir}/package.json`;
const backup = `${dir}/.package.dev.json`;

// A pack that failed after prepack (or a --dry-run, which skips postpack) left the development
// manifest in the backup: it is the true one.
if (existsSync(backup)) renameSync(backup, manifestFile);
const tsup = fileURLToPath(new URL("../../node_modules/.bin/tsup", import.meta.url));
execFileSync(tsup, [], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });

const dev = JSON.parse(readFileSync(manifestFile, "utf8"));
const { publishConfig = {}, devDependencies: _dev, scripts: _scripts, ...rest } = dev;
const published = { ...rest };
for (const k of LIFTED) if (k in publishConfig) published[k] = publishConfig[k];
const leftover = Object.fromEntries(Object.entries(publishConfig).filter(([k]) => !LIFTED.includes(k)));
if (Object.keys(leftover).length) published.publishConfig = leftover;
// No scripts: a consumer never builds it, and npm runs postpack from the manifest it read first.

copyFileSync(manifestFile, backup);
writeFileSync(manifestFile, JSON.stringify(published, null, 2) + "\n");
