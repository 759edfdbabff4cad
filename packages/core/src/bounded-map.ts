// A Map that holds at most `max` entries: adding a key when full evicts the oldest one added. For the
// per-process memos of pure functions whose keys come from tenants (cron expressions, signing secrets,
// target URLs), so a long-running process cannot grow without limit. Map keeps insertion order, so
// the oldest key is the first one iterated.
export class BoundedMap<K, V> extends Map<K, V> {
  private readonly max: number;

  constructor(max: number) {
    super();
    this.max = max;
  }

  override set(key: K, value: V): this {
    if (this.size >= this.max && !this.has(key)) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }

  /** The value for `key`, made by `make` and kept on a miss. */
  getOrSet(key: K, make: () => V): V {
    let v = this.get(key);
    if (v === undefined) {
      v = make();
      this.set(key, v);
    }
    return v;
  }
}
