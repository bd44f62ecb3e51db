import { getTestServer } from "@google-cloud/functions-framework/testing";

/**
 * `GET /healthz` through the registered cloud function `meta` (functions/index.ts must be imported
 * first), on a throw-away server: what a cold start answers, as status and JSON body.
 */
export async function functionHealth(): Promise<{ status: number; body: Record<string, unknown> }> {
  const server = getTestServer("meta");
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } finally {
    await new Promise((r) => server.close(r));
  }
}
