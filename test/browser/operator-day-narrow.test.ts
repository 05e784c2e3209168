// The operator's day at 390 px (test/browser/operator-day.ts).
import { operatorDayTests } from './operator-day.js';

operatorDayTests({ widths: [390], polling: false });
