// The signing schemes of a webhook: TypeScript with no import, so the web console (bundled for the browser) offers the
// same list the API accepts.

/** What the signature covers: the body alone, or `${X-Webhook-Timestamp}.${body}` (replay-resistant). */
export type SignatureScheme = 'body' | 'timestamp.body';
export const SIGNATURE_SCHEMES: readonly SignatureScheme[] = ['body', 'timestamp.body'];
