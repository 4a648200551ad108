import { createHash } from 'node:crypto';
import { z } from 'zod';
import { CcpError } from '@ccpipe/core';

const DatasetRef = z.union([z.number().int().min(0), z.string().regex(/^[A-Za-z0-9._-]+$/)]);
const Entry = z
  .object({
    /** Who this is, for logs and metrics; never the token. */
    name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
    /** The bearer token itself (at least 16 characters) … */
    token: z.string().min(16).optional(),
    /** … or its SHA-256 in hex, so the file need not hold the secret. */
    sha256: z.string().regex(/^[0-9a-fA-F]{64}$/).optional(),
    /** Dataset ids or names this token may see, or "*" for all. */
    datasets: z.union([z.literal('*'), z.array(DatasetRef)]),
  })
  .strict()
  .refine((e) => (e.token === undefined) !== (e.sha256 === undefined), { message: 'give exactly one of token and sha256' });
const AclFile = z.object({ v: z.literal(1), tokens: z.array(Entry).min(1) }).strict();

/** One authenticated caller: which datasets it may see. */
export interface AclPrincipal {
  readonly name: string;
  /** True when the dataset (by id, or by name when the ACL names it) is visible to this caller. */
  canSee(datasetId: number, datasetName: string | undefined): boolean;
}

const ALL: (id: number, name: string | undefined) => boolean = () => true;

/**
 * A dataset ACL: bearer token → datasets it may see. Tokens are compared as SHA-256 digests (a Map lookup on the
 * digest leaks nothing useful about the token through timing). Immutable.
 */
export class Acl {
  private readonly byDigest: Map<string, AclPrincipal>;

  private constructor(byDigest: Map<string, AclPrincipal>) {
    this.byDigest = byDigest;
  }

  /**
   * Parses an ACL file: `{"v": 1, "tokens": [{"name", "token" | "sha256", "datasets": "*" | [id | name, …]}]}`.
   * @throws CcpError CCP_ERR_API_ACL when it is not JSON, does not match the schema, or repeats a token or name
   *   (the message never contains a token).
   */
  static parse(bytes: Uint8Array | string): Acl {
    let json: unknown;
    try {
      json = JSON.parse(typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'));
    } catch (cause) {
      throw new CcpError('CCP_ERR_API_ACL', 'ACL file is not JSON', { cause });
    }
    const parsed = AclFile.safeParse(json);
    if (!parsed.success) {
      const where = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw new CcpError('CCP_ERR_API_ACL', `ACL file does not match its schema (${where})`);
    }
    const byDigest = new Map<string, AclPrincipal>();
    const names = new Set<string>();
    for (const e of parsed.data.tokens) {
      const digest = e.sha256 !== undefined ? e.sha256.toLowerCase() : sha256(e.token as string);
      if (byDigest.has(digest) || names.has(e.name)) throw new CcpError('CCP_ERR_API_ACL', 'ACL file repeats a token or a name', { detail: { name: e.name } });
      names.add(e.name);
      byDigest.set(digest, { name: e.name, canSee: e.datasets === '*' ? ALL : visibility(e.datasets) });
    }
    return new Acl(byDigest);
  }

  /**
   * The caller an `Authorization` header value names, or null when it is missing, not `Bearer <token>`, or the
   * token is unknown. Never throws.
   */
  authenticate(authorization: string | undefined): AclPrincipal | null {
    if (authorization === undefined) return null;
    const m = /^Bearer[ ]+([^\s]+)\s*$/i.exec(authorization);
    if (m === null) return null;
    return this.byDigest.get(sha256(m[1] as string)) ?? null;
  }

  /** Number of tokens (for the startup log line). */
  get size(): number {
    return this.byDigest.size;
  }
}

function visibility(refs: readonly (number | string)[]): (id: number, name: string | undefined) => boolean {
  const ids = new Set(refs.filter((r): r is number => typeof r === 'number'));
  const names = new Set(refs.filter((r): r is string => typeof r === 'string'));
  return (id, name) => ids.has(id) || (name !== undefined && names.has(name));
}

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
