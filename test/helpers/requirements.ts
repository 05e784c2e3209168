// A test that needs root or a system tool runs wherever that is there. Under CI (.ci/run runs as root and installs the
// tools) it always runs: a missing tool or user then fails it, never skips it.
export const skipUnless = (present: boolean, why: string): false | string => (present || process.env.CI ? false : why);
