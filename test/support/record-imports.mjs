// Preloaded with `node --import` (NODE_OPTIONS) in a server process under test: every module URL the
// process resolves through the ESM loader is appended to $FAIRWAY_IMPORT_LOG, so a test can tell
// which modules a configuration loads (record-imports-hooks.mjs runs on the loader's thread).
import { register } from "node:module";

register(new URL("./record-imports-hooks.mjs", import.meta.url));
