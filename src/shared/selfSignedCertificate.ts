import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/**
 * A self-signed X.509 certificate for a wire door's TLS when the operator gives none (MySQL's
 * server makes its own the same way, `auto_generate_certs`): clients that switch to TLS by default
 * (MariaDB's and MySQL's `mysql`, Connector/J) then send their password inside TLS instead of in
 * clear. Node's crypto makes keys and signs but has no API that builds a certificate, so the few
 * DER structures of one are written here (RFC 5280) rather than pulling in a package (node-forge,
 * @peculiar/x509) or shelling out to the openssl CLI, which a deployment may lack.
 */

type PemPair = { cert: string; key: string };

/** DER: a tag, its length (short or long form), its content. */
const der = (tag: number, ...content: Buffer[]): Buffer => {
  const body = Buffer.concat(content);
  const n = body.length;
  let length: Buffer;
  if (n < 0x80) length = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
    length = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), length, body]);
};

const sequence = (...content: Buffer[]) => der(0x30, ...content);
const set = (...content: Buffer[]) => der(0x31, ...content);
const utf8 = (text: string) => der(0x0c, Buffer.from(text, 'utf8'));
const octets = (bytes: Buffer) => der(0x04, bytes);
const bits = (bytes: Buffer) => der(0x03, Buffer.from([0]), bytes);
const TRUE = der(0x01, Buffer.from([0xff]));

/** A non-negative INTEGER from its big-endian bytes (a leading 0 keeps the sign bit clear). */
const unsigned = (bytes: Buffer) => der(0x02, bytes[0]! & 0x80 ? Buffer.from([0]) : Buffer.alloc(0), bytes);

const oid = (dotted: string) => {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [a! * 40 + b!];
  for (const arc of rest) {
    const groups = [arc & 0x7f];
    for (let v = arc >>> 7; v > 0; v >>>= 7) groups.unshift(0x80 | (v & 0x7f));
    out.push(...groups);
  }
  return der(0x06, Buffer.from(out));
};

/** UTCTime up to 2049, GeneralizedTime after (RFC 5280 §4.1.2.5). */
const time = (at: Date) => {
  const iso = at.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  return at.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(iso.slice(2))) : der(0x18, Buffer.from(iso));
};

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));

const extension = (id: string, critical: boolean, value: Buffer) =>
  sequence(oid(id), ...(critical ? [TRUE] : []), octets(value));

/** subjectAltName: DNS names and IP addresses, which clients that verify the host check. */
const altNames = (hosts: string[]) =>
  sequence(
    ...[...new Set(hosts.filter(Boolean))].map((h) => {
      const version = net.isIP(h);
      if (version === 4) return der(0x87, Buffer.from(h.split('.').map(Number)));
      if (version === 6) return der(0x87, ipv6Bytes(h));
      return der(0x82, Buffer.from(h, 'ascii'));
    }),
  );

const ipv6Bytes = (address: string) => {
  const [head, tail = ''] = address.split('::');
  const words = (s: string) => (s ? s.split(':').map((w) => parseInt(w, 16)) : []);
  const front = words(head!);
  const back = address.includes('::') ? words(tail) : [];
  const all = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  const out = Buffer.alloc(16);
  all.forEach((w, i) => out.writeUInt16BE(w, i * 2));
  return out;
};

/**
 * A new self-signed certificate (ECDSA P-256, SHA-256; a CA of itself, so a client can be given
 * this very file as its CA) naming `hosts` (DNS names and IP addresses), valid from an hour ago
 * (clocks disagree) for `days`.
 */
export const selfSignedCertificate = (o: {
  hosts: string[];
  commonName?: string;
  days?: number;
  now?: Date;
}): PemPair => {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const now = o.now ?? new Date();
  const name = sequence(set(sequence(oid('2.5.4.3'), utf8(o.commonName ?? 'mindledger'))));
  const serial = crypto.randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  // RFC 5280's subject key identifier: SHA-1 of the key's point (P-256's SPKI ends with its 65 bytes).
  const keyId = crypto
    .createHash('sha1')
    .update(spki.subarray(spki.length - 65))
    .digest();
  const tbs = sequence(
    der(0xa0, der(0x02, Buffer.from([2]))),
    unsigned(serial),
    ECDSA_WITH_SHA256,
    name,
    sequence(
      time(new Date(now.getTime() - 3600_000)),
      time(new Date(now.getTime() + (o.days ?? 3650) * 86_400_000)),
    ),
    name,
    spki,
    der(
      0xa3,
      sequence(
        extension('2.5.29.19', true, sequence(TRUE)),
        // keyUsage: digitalSignature (bit 0) and keyCertSign (bit 5), two unused bits.
        extension('2.5.29.15', true, der(0x03, Buffer.from([0x02, 0x84]))),
        extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'))),
        extension('2.5.29.14', false, octets(keyId)),
        extension('2.5.29.17', false, altNames(o.hosts)),
      ),
    ),
  );
  const signature = crypto.sign('sha256', tbs, privateKey);
  const certificate = sequence(tbs, ECDSA_WITH_SHA256, bits(signature));
  const base64 = certificate.toString('base64').replace(/(.{64})/g, '$1\n');
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${base64.replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
};

/** Whether a PEM pair read back is one certificate and its key, valid a while longer. */
const usable = (pair: PemPair, now: Date) => {
  try {
    const x509 = new crypto.X509Certificate(pair.cert);
    const margin = 7 * 86_400_000;
    return (
      x509.checkPrivateKey(crypto.createPrivateKey(pair.key)) &&
      new Date(x509.validTo).getTime() > now.getTime() + margin
    );
  } catch {
    return false;
  }
};

/**
 * The door's certificate kept in `dir` (`server-cert.pem`, `server-key.pem`, MySQL's names): made
 * on first start and reused after, so a client can pin it (`mysql --ssl-ca=<dir>/server-cert.pem
 * --ssl-verify-server-cert`) across restarts; made again when missing, broken or about to expire.
 * The key file is readable by the service's user only.
 */
export const selfSignedCertificateIn = (dir: string, hosts: string[], now = new Date()): PemPair => {
  const certFile = path.join(dir, 'server-cert.pem');
  const keyFile = path.join(dir, 'server-key.pem');
  try {
    const kept = { cert: fs.readFileSync(certFile, 'utf8'), key: fs.readFileSync(keyFile, 'utf8') };
    if (usable(kept, now)) return kept;
  } catch {
    // Not made yet (or unreadable): made below.
  }
  const made = selfSignedCertificate({ hosts, now });
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Each file appears whole (written aside, then renamed): a reader never sees half a key.
  const write = (file: string, text: string, mode: number) => {
    const aside = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(aside, text, { mode });
    fs.renameSync(aside, file);
  };
  write(keyFile, made.key, 0o600);
  write(certFile, made.cert, 0o644);
  return made;
};
