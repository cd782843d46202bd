/** What every reader shows instead of a secret. A write that sends it back keeps the stored value. */
export const MASK = '******';

const secretKey =
  /^(password|passwd|pwd|token|secret|api_key|apikey|private_key|access_key|secret_key|.*_api_key|.*_token|.*_secret|.*_password)$/i;

export const isSecretKey = (key: string): boolean => secretKey.test(key);

/** A deep copy with every secret-looking key's value replaced by the mask. */
export const maskSecrets = <T>(value: T): T => {
  if (Array.isArray(value)) return value.map((v: unknown) => maskSecrets(v)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      out[k] =
        isSecretKey(k) && v !== null && v !== undefined && typeof v !== 'object' ? MASK : maskSecrets(v);
    }
    return out as T;
  }
  return value;
};

/**
 * Clients echo back what they read, masks included. Wherever the incoming value is the mask,
 * keep what was stored, so a read-modify-write never overwrites a password with "******".
 */
export const keepMaskedSecrets = (
  incoming: Record<string, unknown>,
  stored: Record<string, unknown> | undefined,
): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(incoming)) {
    if (v === MASK && stored && k in stored) out[k] = stored[k];
    else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const previous = stored?.[k];
      out[k] = keepMaskedSecrets(
        v as Record<string, unknown>,
        previous !== null && typeof previous === 'object' ? (previous as Record<string, unknown>) : undefined,
      );
    } else out[k] = v;
  }
  return out;
};
