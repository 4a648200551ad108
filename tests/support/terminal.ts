/**
 * The lines a terminal shows after `writes` (both streams, in order): \r and cursor-to-column-1 return, erase codes
 * erase, other escape codes do nothing. A small terminal model for tests of a progress bar and log lines sharing one.
 */
export function screen(writes: string[]): string[] {
  const lines = [''];
  let col = 0;
  for (const tok of writes.join('').split(/(\x1b\[[0-9;?]*[A-Za-z]|\r|\n)/)) {
    const cur = lines.length - 1;
    if (tok === '\n') {
      lines.push('');
      col = 0;
    } else if (tok === '\r' || tok === '\x1b[1G') col = 0;
    else if (tok === '\x1b[2K') lines[cur] = '';
    else if (tok === '\x1b[0K' || tok === '\x1b[K') lines[cur] = lines[cur]!.slice(0, col);
    else if (tok.startsWith('\x1b[')) continue;
    else if (tok !== '') {
      lines[cur] = lines[cur]!.slice(0, col) + tok + lines[cur]!.slice(col + tok.length);
      col += tok.length;
    }
  }
  return lines;
}
