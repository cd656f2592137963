import type { TimestampRing } from './timestamp-ring.js';

// Slot tables start small and double as keys arrive, up to `maxKeys`.
const initialSlots = 1024;
const none = -1;

/**
 * The keys of a sliding-window limiter, at most `maxKeys`, each with its newest counted timestamp
 * and, once it has more than one request in its window, a ring of them. At `maxKeys`, a new key
 * evicts the least recently counted one.
 *
 * Each key owns a slot in parallel tables, linked in the order of their last counted request
 * (`head` the least recent): eviction and "move to most recent" are O(1) pointer updates, where a
 * Map used as a queue would scan the holes its deletions leave behind.
 */
export class LimiterKeyTable {
  private readonly slots = new Map<string, number>();
  private readonly maxKeys: number;
  private capacity: number;
  private readonly keyAt: Array<string | undefined>;
  // A one-hit key's only timestamp, a busier key's newest: what eviction order and expiry read.
  private newest: Float64Array;
  private readonly rings: Array<TimestampRing | undefined>;
  private previous: Int32Array;
  private next: Int32Array;
  private head = none;
  private tail = none;
  private slotsUsed = 0;
  private freeSlot = none; // slots given back by `remove`, chained through `next`

  constructor(maxKeys: number) {
    this.maxKeys = maxKeys;
    this.capacity = Math.min(maxKeys, initialSlots);
    this.keyAt = new Array(this.capacity);
    this.newest = new Float64Array(this.capacity);
    this.rings = new Array(this.capacity);
    this.previous = new Int32Array(this.capacity);
    this.next = new Int32Array(this.capacity);
  }

  /** Keys currently held. */
  get size(): number {
    return this.slots.size;
  }

  /** The slot of `key`, or `undefined` when it is not held. */
  find(key: string): number | undefined {
    return this.slots.get(key);
  }

  /** Adds `key` with one request at `now`, as the most recently counted key (evicting the least recent at `maxKeys`). */
  add(key: string, now: number): void {
    const slot = this.takeSlot();
    this.slots.set(key, slot);
    this.keyAt[slot] = key;
    this.rings[slot] = undefined;
    this.newest[slot] = now;
    this.append(slot);
  }

  /** The newest counted timestamp of the key in `slot`. */
  newestAt(slot: number): number {
    return this.newest[slot]!;
  }

  /** The ring of the key in `slot`; `undefined` while it holds one timestamp. */
  ringAt(slot: number): TimestampRing | undefined {
    return this.rings[slot];
  }

  /** Gives the key in `slot` a ring, or takes it away (back to one number). */
  setRing(slot: number, ring: TimestampRing | undefined): void {
    this.rings[slot] = ring;
  }

  /** Records a request counted at `now`: the key in `slot` becomes the most recently counted. */
  counted(slot: number, now: number): void {
    this.newest[slot] = now;
    if (slot !== this.tail) {
      this.unlink(slot);
      this.append(slot);
    }
  }

  /** Forgets `key`; its slot is reused by the next new key. */
  remove(key: string): void {
    const slot = this.slots.get(key);
    if (slot === undefined) return;
    this.slots.delete(key);
    this.unlink(slot);
    this.keyAt[slot] = undefined;
    this.rings[slot] = undefined;
    this.next[slot] = this.freeSlot;
    this.freeSlot = slot;
  }

  /** A slot for a new key: a freed one, a fresh one, or the least recently counted key's. */
  private takeSlot(): number {
    if (this.freeSlot !== none) {
      const slot = this.freeSlot;
      this.freeSlot = this.next[slot]!;
      return slot;
    }
    if (this.slotsUsed === this.capacity && this.capacity < this.maxKeys) this.grow();
    if (this.slotsUsed < this.capacity) return this.slotsUsed++;
    const slot = this.head;
    this.slots.delete(this.keyAt[slot]!);
    this.unlink(slot);
    return slot;
  }

  private unlink(slot: number): void {
    const before = this.previous[slot]!;
    const after = this.next[slot]!;
    if (before === none) this.head = after;
    else this.next[before] = after;
    if (after === none) this.tail = before;
    else this.previous[after] = before;
  }

  private append(slot: number): void {
    this.previous[slot] = this.tail;
    this.next[slot] = none;
    if (this.tail === none) this.head = slot;
    else this.next[this.tail] = slot;
    this.tail = slot;
  }

  private grow(): void {
    this.capacity = Math.min(this.maxKeys, this.capacity * 2);
    this.keyAt.length = this.capacity;
    this.rings.length = this.capacity;
    this.newest = copyInto(this.newest, new Float64Array(this.capacity));
    this.previous = copyInto(this.previous, new Int32Array(this.capacity));
    this.next = copyInto(this.next, new Int32Array(this.capacity));
  }
}

function copyInto<T extends Float64Array | Int32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
