/** What a probe answered: status, media type and parsed body. */
export interface ProbeAnswer {
  status: number;
  type: string | null;
  body: { status?: unknown; code?: string; detail?: string; checks?: Array<{ name: string; ok: boolean }> };
  text: string;
}

/** `GET <url><path>` with no cookie and no origin, as a kubelet or load balancer asks. */
export async function probe(url: string, path: '/healthz' | '/readyz'): Promise<ProbeAnswer> {
  const response = await fetch(new URL(path, url));
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body: JSON.parse(text) as ProbeAnswer['body'],
    text,
  };
}
