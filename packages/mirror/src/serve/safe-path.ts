import { promises as fsp } from 'node:fs';
import * as path from 'node:path';

/**
 * Turns a raw HTTP request target (`/crawl-data/X/warc.paths.gz?x=1`) into the relative path segments of
 * a file below the served directory, or `null` when it must be answered with 404.
 *
 * Rejected, before and after percent-decoding: a target not starting with `/`, backslashes, NUL,
 * control characters, `.` and `..` segments (also as `%2e%2e`, `.%2E`, …), encoded slashes (`%2f`),
 * bad percent-encoding, and an empty file name (a "directory"). The query string is ignored, as S3
 * ignores unknown query parameters on GET Object. Pure; never throws.
 */
export function requestTargetToSegments(rawTarget: string): string[] | null {
  if (!rawTarget.startsWith('/')) return null;
  const q = rawTarget.indexOf('?');
  const rawPath = q < 0 ? rawTarget : rawTarget.slice(0, q);
  if (/[\\\x00-\x1f\x7f]/.test(rawPath)) return null;
  const rawSegments = rawPath.slice(1).split('/');
  const segments: string[] = [];
  for (const raw of rawSegments) {
    if (/%2f|%5c|%00/i.test(raw)) return null;
    let seg: string;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (/[\\\x00-\x1f\x7f/]/.test(seg)) return null;
    if (seg === '.' || seg === '..') return null;
    if (seg === '') continue; // `//` collapses, like S3 keys are not; harmless for a local mirror
    segments.push(seg);
  }
  if (segments.length === 0 || rawPath.endsWith('/')) return null;
  return segments;
}

/** A regular file found inside the served root. */
export interface ResolvedFile {
  path: string;
  size: number;
  mtime: Date;
}

/**
 * Resolves segments to a regular file whose real path (symlinks followed) lies inside `rootReal`,
 * which must itself be a real path (see `fs.realpath`). Returns `null` for anything missing, not a
 * regular file, or escaping the root through a symlink. Never throws for missing files.
 */
export async function resolveInsideRoot(rootReal: string, segments: string[]): Promise<ResolvedFile | null> {
  const joined = path.join(rootReal, ...segments);
  if (!isInside(rootReal, joined)) return null;
  let real: string;
  try {
    real = await fsp.realpath(joined);
  } catch {
    return null;
  }
  if (!isInside(rootReal, real)) return null;
  try {
    const st = await fsp.stat(real);
    if (!st.isFile()) return null;
    return { path: real, size: st.size, mtime: st.mtime };
  } catch {
    return null;
  }
}

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}
