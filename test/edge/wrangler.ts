// Drives the pinned wrangler (4.86.0, the last that runs on Node 20) offline: `deploy --dry-run` to
// build the exact bundle that would be uploaded, and `dev --local` to run a bundle in workerd.
// Nothing here may reach Cloudflare: metrics and the Request.cf download are off, no login needed.
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { promisify } from "node:util";

const root = fileURLToPath(new URL("../..", import.meta.url));
const wrangler = join(root, "node_modules/.bin/wrangler");
const config = join(root, "wrangler.toml");

function offlineEnv(stateDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    WRANGLER_SEND_METRICS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    WRANGLER_LOG_PATH: join(stateDir, "logs"),
    XDG_CONFIG_HOME: join(stateDir, "config"),
    ...extra,
  };
}

/** `wrangler deploy --dry-run --outdir`: returns the bundled worker path and wrangler's output. */
export async function buildWorker(outdir: string, stateDir: string): Promise<{ script: string; output: string }> {
  const { stdout, stderr } = await promisify(execFile)(
    wrangler,
    ["deploy", "--config", config, "--dry-run", "--outdir", outdir],
    {
      cwd: root, // wrangler keeps an (ignored) .wrangler/ scratch directory next to wrangler.toml
      env: offlineEnv(stateDir),
      timeout: 60_000,
    },
  );
  return { script: join(outdir, "worker.js"), output: stdout + stderr };
}

export interface WranglerDev {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * `wrangler dev --local` on a pre-built bundle (--no-bundle), so concurrent edits elsewhere in the tree
 * cannot hot-reload the Worker mid-test. Started in its own process group: stop() kills wrangler and
 * its workerd together.
 */
export async function startWranglerDev(opts: {
  script: string;
  stateDir: string;
  hyperdriveUrl: string;
  vars: Record<string, string>;
}): Promise<WranglerDev> {
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const args = [
    "dev",
    opts.script,
    "--config",
    config,
    "--no-bundle",
    "--local",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
  ];
  args.push(
    "--inspector-port",
    String(inspectorPort),
    "--test-scheduled",
    "--persist-to",
    join(opts.stateDir, "state"),
  );
  args.push("--show-interactive-dev-session=false", "--log-level", "info");
  for (const [k, v] of Object.entries(opts.vars)) args.push("--var", `${k}:${v}`);
  const child = spawn(wrangler, args, {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: offlineEnv(opts.stateDir, { CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_HYPERDRIVE: opts.hyperdriveUrl }),
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const dev: WranglerDev = { url: `http://127.0.0.1:${port}`, output: () => out, stop: () => killGroup(child) };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`wrangler dev not ready within 45 s:\n${out}`)), 45_000);
      const check = () => {
        if (!/Ready on http/.test(out)) return;
        clearTimeout(timer);
        resolve();
      };
      child.stdout!.on("data", check);
      child.stderr!.on("data", check);
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`wrangler dev exited with ${code}:\n${out}`));
      });
    });
  } catch (err) {
    await dev.stop();
    throw err;
  }
  return dev;
}

async function killGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    process.kill(-child.pid!, "SIGTERM");
  } catch {
    return; // already gone
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {}
  }, 5_000);
  await exited;
  clearTimeout(timer);
  // workerd shares the group; make sure nothing of it outlives wrangler.
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {}
}

/** A port free right now (the OS picks it); wrangler binds it moments later. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
