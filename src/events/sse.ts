// Reads a Server-Sent Events byte stream (GET /api/events/stream): the `data:` of each message, in order. Plain
// TypeScript with no Node import, so the CLI and the web console (bundled for the browser) share it.

/** Splits an SSE byte stream into the `data:` of each message (comments and heartbeats, which have none, are skipped). */
export async function* sseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) yield data;
    }
  }
}
