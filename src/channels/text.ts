/**
 * Splits a text into parts of at most `max` UTF-16 code units (how Telegram counts its 4096 limit),
 * preferring a line break, then a space, in the second half of each window; never inside a
 * surrogate pair. The separator a part ends on is dropped. Joined with their separators, the parts
 * are the text again.
 */
export const splitText = (text: string, max: number): string[] => {
  if (max < 2) throw new RangeError('splitText: max must be at least 2');
  const parts: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let cut = rest.lastIndexOf('\n', max);
    if (cut < max / 2) cut = rest.lastIndexOf(' ', max);
    if (cut >= max / 2) {
      parts.push(rest.slice(0, cut));
      rest = rest.slice(cut + 1);
      continue;
    }
    cut = max;
    const last = rest.charCodeAt(cut - 1);
    if (last >= 0xd800 && last <= 0xdbff) cut--;
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  parts.push(rest);
  return parts;
};
