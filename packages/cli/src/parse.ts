// Option parsers: a bad value is a usage error naming what to send instead.
import { InvalidArgumentError } from "commander";

export function int(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError("must be an integer");
  return n;
}

export function json(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new InvalidArgumentError(`must be JSON, e.g. '{"to":"a@example.com"}'`);
  }
}
