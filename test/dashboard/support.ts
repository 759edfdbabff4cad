// What the dashboard's browser tests share: one real server process on real Postgres with two tenants
// (acme, globex) and SDK clients for them, a receiver answering the webhooks, a page on another origin
// that may frame the portal, and Chromium (playwright-core); and the checks they make of a page.
// FAIRWAY_SCREENSHOTS=docs/images also saves screenshots of the main views there.
import { createServer, type Server } from "node:http";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import type { Page } from "playwright-core";
import { createAdminClient, createClient, type FairwayAdminClient, type FairwayClient } from "@fairway/sdk";
import { openBrowser, type TestBrowser } from "../support/browser.ts";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";

const shots = process.env.FAIRWAY_SCREENSHOTS;
export async function shot(page: Page, name: string, fullPage = true) {
  if (!shots) return;
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage });
}

/** A page on another origin that embeds `src` in an iframe. */
async function startEmbedder(): Promise<{ url: string; src: string; close(): Promise<void> }> {
  const state = { src: "about:blank" };
  const server: Server = createServer((_, res) => {
    res
      .writeHead(200, { "content-type": "text/html" })
      .end(
        `<!doctype html><title>host</title><iframe id="portal" src="${state.src}" width="800" height="600"></iframe>`,
      );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    set src(v: string) {
      state.src = v;
    },
    get src() {
      return state.src;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** A receiver that answers with its own header and a JSON body echoing the authorization it got. */
export async function startEchoReceiver(): Promise<{
  url: string;
  got: Array<{ url: string; authorization: string; body: string }>;
  close(): Promise<void>;
}> {
  const got: Array<{ url: string; authorization: string; body: string }> = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const authorization = String(req.headers.authorization ?? "");
      got.push({ url: req.url ?? "", authorization, body });
      res
        .writeHead(201, { "content-type": "application/json", "x-receipt": `rcpt-${req.headers["webhook-id"]}` })
        .end(JSON.stringify({ received: true, sawAuthorization: authorization }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    got,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Form controls on the page without an accessible name (label, aria-label or text). */
export function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll("input:not([type=hidden]), select, textarea, button, a[href]"))
      .filter((el) => {
        const named = (el.getAttribute("aria-label") ?? "").trim() || (el.textContent ?? "").trim();
        const labels = (el as HTMLInputElement).labels;
        return !named && !(labels && labels.length > 0);
      })
      .map((el) => el.outerHTML.slice(0, 120)),
  );
}

/** The API's refusal of a request (its code and message); fails if the API accepted it. */
export async function refusal(request: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await request;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error("the API accepted what the dashboard refused");
}

/** Whether the page is wider than its viewport (a horizontal scroll at phone width). */
export function overflowsX(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
}

export interface Dashboard {
  db: TestDb;
  server: ServerProcess;
  receiver: Receiver;
  embedder: Awaited<ReturnType<typeof startEmbedder>>;
  admin: FairwayAdminClient;
  acme: FairwayClient;
  globex: FairwayClient;
  browser: TestBrowser;
  /** A page of `browser`, signed in as the operator when `signedIn` was asked for. */
  page: Page;
}

/** The server, tenants, receiver and browser of one test file: filled in before its first test. */
export function useDashboard(opts: { signedIn?: boolean; env?: Record<string, string> } = {}): Dashboard {
  const d = {} as Dashboard;
  beforeAll(async () => {
    d.db = await createTestDb();
    await d.db.store.close();
    d.receiver = await startReceiver();
    d.embedder = await startEmbedder();
    // Info level: the access log's lines are checked for tokens.
    d.server = await startServerProcess({
      DATABASE_URL: d.db.url,
      FAIRWAY_PORTAL_ORIGINS: d.embedder.url,
      FAIRWAY_LOG_LEVEL: "info",
      ...opts.env,
    });
    d.admin = createAdminClient({ baseUrl: d.server.url, adminToken: d.server.adminToken });
    const t = await d.admin.tenants.create({ id: "acme", name: "Acme Corp" });
    d.receiver.secrets = [t.signingSecret];
    d.acme = createClient({ baseUrl: d.server.url, apiKey: (await d.admin.tenants.createKey("acme")).key });
    await d.admin.tenants.create({ id: "globex", name: "Globex" });
    d.globex = createClient({ baseUrl: d.server.url, apiKey: (await d.admin.tenants.createKey("globex")).key });
    d.browser = await openBrowser();
    d.page = await d.browser.context.newPage();
    if (opts.signedIn) {
      await d.page.goto(`${d.server.url}/dashboard/login`);
      await d.page.getByLabel("Admin token").fill(d.server.adminToken);
      await d.page.getByRole("button", { name: "Sign in" }).click();
      await d.page.getByRole("heading", { name: "Tenants", level: 1 }).waitFor();
    }
  }, 120_000);

  afterAll(async () => {
    await d.browser?.close();
    await d.server?.stop();
    await d.receiver?.close();
    await d.embedder?.close();
    await d.db?.drop();
  });
  return d;
}
