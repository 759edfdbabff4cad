// A real browser for dashboard tests: Debian's Chromium (/usr/bin/chromium, apt-get install chromium)
// driven by playwright-core, which downloads nothing. Each context gets a fresh user data directory, so
// no cookie or cache crosses from one to the next; it is deleted on close.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

const CHROMIUM = process.env.FAIRWAY_CHROMIUM ?? "/usr/bin/chromium";

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function openBrowser(viewport = { width: 1280, height: 900 }): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\`, or set FAIRWAY_CHROMIUM to its path`,
    );
  }
  const dir = mkdtempSync(join(tmpdir(), "fairway-chromium-"));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
