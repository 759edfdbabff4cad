// Which pool types take jobs without a target: those with an in-process handler (deps.handlerTypes)
// and those a handler worker has registered (store handler-pools.ts). Only positive answers are
// cached, so a worker started a moment ago is seen at once; a type never becomes a webhook pool again.
import { handlerPoolTypes, type Db } from "@fairway/store";

const known = new WeakMap<Db, Set<string>>();

/** `inProcess`, plus `type` when a worker has registered it. */
export async function handlerTypesFor(
  db: Db,
  inProcess: ReadonlySet<string>,
  type: string,
): Promise<ReadonlySet<string>> {
  if (inProcess.has(type)) return inProcess;
  let served = known.get(db);
  if (!served?.has(type)) {
    served = await handlerPoolTypes(db);
    known.set(db, served);
  }
  return served.has(type) ? new Set([...inProcess, type]) : inProcess;
}
