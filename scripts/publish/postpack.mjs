// Puts back the development package.json that prepack.mjs swapped out (see there).
import { existsSync, renameSync } from "node:fs";

const backup = `${process.cwd()}/.package.dev.json`;
if (existsSync(backup)) renameSync(backup, `${process.cwd()}/package.json`);
