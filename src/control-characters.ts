// Characters that change how text is shown rather than being shown: C0 and C1 controls (ESC starts terminal commands,
// `ESC ] 52` writes the clipboard) and the bidirectional-text controls (U+202E makes "gpj.exe" read "exe.jpg").
// Text from outside (group subjects, file names, key names) passes through here before a terminal or a header shows it.

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Each control character written out as `\xHH` or `\uHHHH`, so that it is seen and not obeyed. */
export function escapeControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** The text with every control character replaced by `replacement`. */
export function replaceControlCharacters(text: string, replacement: string): string {
  return text.replace(CONTROL_CHARACTERS, replacement);
}
