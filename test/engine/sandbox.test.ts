// The conformance suite on the sandbox engine: sessions pair through the sandbox control route.
import { CONFORMANCE_DAEMON, runEngineSuite } from './conformance.js';
import { startSandboxTarget } from './targets.js';

runEngineSuite({ name: 'sandbox', start: () => startSandboxTarget(CONFORMANCE_DAEMON) });
