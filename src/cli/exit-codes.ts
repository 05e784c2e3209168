// Exit codes of the CLI, named once.
export const ExitCode = {
  Success: 0,
  Failure: 1,
  Usage: 2,
  Unreachable: 3,
  Config: 4,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
