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

/** A number within [min, max]: the API's bound, refused here before any request is sent. */
export function between(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max) {
      throw new InvalidArgumentError(`must be a number from ${min} to ${max}`);
    }
    return n;
  };
}

export function intBetween(min: number, max: number) {
  const inRange = between(min, max);
  return (value: string): number => {
    const n = inRange(value);
    if (!Number.isInteger(n)) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return n;
  };
}
