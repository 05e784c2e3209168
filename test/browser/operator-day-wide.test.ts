// The operator's day at 1280 px, and a key without an event stream (test/browser/operator-day.ts).
import { operatorDayTests } from './operator-day.js';

operatorDayTests({ widths: [1280], polling: true });
