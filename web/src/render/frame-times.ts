// How long the renderer's recent frames took on the main thread (the benchmark's split between
// drawing and what the browser does after: raster, compositing). A ring: a long session keeps
// only the newest.
export class FrameTimes {
  private readonly times: Float64Array;
  private next = 0;
  private count = 0;

  constructor(size = 512) {
    this.times = new Float64Array(size);
  }

  record(ms: number): void {
    this.times[this.next] = ms;
    this.next = (this.next + 1) % this.times.length;
    this.count = Math.min(this.count + 1, this.times.length);
  }

  /** The recorded durations, oldest first. */
  recent(): number[] {
    const n = this.times.length;
    return Array.from({ length: this.count }, (_, i) => this.times[(this.next - this.count + i + n) % n]);
  }
}
