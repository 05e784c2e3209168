// Reads a Server-Sent Events byte stream (GET /api/events/stream): each message's `id:` and `data:`, in order. Plain
// TypeScript with no Node import, so the CLI and the web console (bundled for the browser) share it.

export interface SseMessage {
  /** the message's `id:` (the event log cursor after it), when it has one */
  id?: string;
  data: string;
}

/** Splits an SSE byte stream into messages (comments and heartbeats, which have no data, are skipped). */
export async function* sseMessages(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        else if (line.startsWith('id:')) id = line.slice(3).replace(/^ /, '');
      }
      if (data.length) yield id === undefined ? { data: data.join('\n') } : { id, data: data.join('\n') };
    }
  }
}

/** The `data:` of each message of an SSE byte stream. */
export async function* sseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  for await (const message of sseMessages(body)) yield message.data;
}
