/** One scrape of `GET /metrics`, parsed: `name{label="value",…}` (labels sorted, `service` left out) → value. */
export async function scrape(url: string): Promise<Map<string, number>> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  if (!response.headers.get('content-type')?.startsWith('text/plain; version=0.0.4'))
    throw new Error(`not Prometheus text: ${response.headers.get('content-type')}`);
  const series = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels = [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)]
      .filter(([, name]) => name !== 'service')
      .map(([, name, value]) => `${name}="${value}"`)
      .sort();
    series.set(labels.length === 0 ? match[1]! : `${match[1]}{${labels.join(',')}}`, Number(match[3]));
  }
  return series;
}

/** The values of the series of `name`, keyed by their labels (as {@link scrape} writes them). */
export function seriesOf(scraped: Map<string, number>, name: string): Record<string, number> {
  return Object.fromEntries(
    [...scraped]
      .filter(([key]) => key === name || key.startsWith(`${name}{`))
      .map(([key, value]) => [key.slice(name.length), value]),
  );
}
