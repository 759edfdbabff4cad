// The scenarios, in the order they run (throughput first: cron-burst's bound
// uses the throughput measured in the same invocation).
import type { Scenario } from "../lib/scenario.ts";
import { api } from "./api.ts";
import { citus } from "./citus.ts";
import { capUtilisation } from "./cap-utilisation.ts";
import { caps } from "./caps.ts";
import { cron, cronSpread } from "./cron.ts";
import { dashboard } from "./dashboard.ts";
import { frontDoor } from "./front-door.ts";
import { keyFairness } from "./key-fairness.ts";
import { noisy } from "./noisy.ts";
import { pooler } from "./pooler.ts";
import { retentionUnderLoad } from "./retention.ts";
import { scale } from "./scale.ts";
import { shortWindowShare } from "./short-window-share.ts";
import { throughput } from "./throughput.ts";
import { webhooks } from "./webhooks.ts";
import { weights } from "./weights.ts";

export const scenarios: Scenario[] = [
  throughput,
  noisy,
  weights,
  caps,
  capUtilisation,
  shortWindowShare,
  keyFairness,
  cron,
  cronSpread,
  scale,
  retentionUnderLoad,
  webhooks,
  api,
  frontDoor,
  dashboard,
  pooler,
  citus,
];
