/** Ring of ascending timestamps that grows on demand up to `limit` (most keys never fill it). */
export class TimestampRing {
  private times: Float64Array;
  private start = 0;
  size = 0;
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
    this.times = new Float64Array(Math.min(limit, 4));
  }

  push(time: number): void {
    if (this.size === this.times.length) this.grow();
    this.times[(this.start + this.size) % this.times.length] = time;
    this.size++;
  }

  oldest(): number {
    return this.times[this.start]!;
  }

  /** Drops timestamps `<= cutoff` (requests that have left the window). */
  dropUntil(cutoff: number): void {
    while (this.size > 0 && this.times[this.start]! <= cutoff) {
      this.start = (this.start + 1) % this.times.length;
      this.size--;
    }
  }

  private grow(): void {
    const next = new Float64Array(Math.min(this.limit, this.times.length * 2));
    for (let index = 0; index < this.size; index++) next[index] = this.times[(this.start + index) % this.times.length]!;
    this.times = next;
    this.start = 0;
  }
}
