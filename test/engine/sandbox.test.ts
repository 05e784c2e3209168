// The conformance suite on the sandbox engine: sessions pair through the sandbox control route.
import { runEngineSuite } from './conformance.js';
import { GOVERNED_FREELY, startSandboxTarget } from './targets.js';

runEngineSuite({ name: 'sandbox', start: () => startSandboxTarget(GOVERNED_FREELY) });
