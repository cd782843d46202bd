import type { Role, SqlAnswer } from './logic';

/** A request the server refused for want of a session (sign-in on): the console asks to sign in. */
export class SignInRequired extends Error {
  constructor() {
    super('Sign in to continue');
  }
}

/** An HTTP problem (`application/problem+json`), with its title and detail. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
  ) {
    super(detail ? `${title}: ${detail}` : title);
  }
}

type Listener = () => void;
const signInListeners: Listener[] = [];
/** Called whenever a request answers 401. */
export const onSignInRequired = (listener: Listener) => signInListeners.push(listener);

const problemOf = async (res: Response) => {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as { title?: string; detail?: string };
    return new HttpProblem(res.status, body.title ?? res.statusText, body.detail ?? '');
  } catch {
    return new HttpProblem(res.status, res.statusText || `HTTP ${res.status}`, text.slice(0, 500));
  }
};

/** fetch with the session cookie; a 401 raises SignInRequired (and tells the listeners). */
export const request = async (path: string, init: RequestInit = {}): Promise<Response> => {
  const res = await fetch(path, { credentials: 'same-origin', ...init });
  if (res.status === 401) {
    for (const l of signInListeners) l();
    throw new SignInRequired();
  }
  if (!res.ok) throw await problemOf(res);
  return res;
};

export const getJson = async <T>(path: string): Promise<T> => (await (await request(path)).json()) as T;

export const sendJson = async <T>(method: string, path: string, body: unknown): Promise<T> => {
  const res = await request(path, {
    method,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return (text ? JSON.parse(text) : {}) as T;
};

/** POST /api/sql/query: always 200, errors are in the answer. */
export const runSql = (query: string, context?: Record<string, unknown>) =>
  sendJson<SqlAnswer>('POST', '/api/sql/query', context ? { query, context } : { query });

/** A query's rows as objects keyed by column name (errors thrown). */
export const sqlRows = async (query: string): Promise<Record<string, unknown>[]> => {
  const answer = await runSql(query);
  if (answer.type === 'error')
    throw new Error(`${answer.error_code ?? ''} ${answer.error_message ?? ''}`.trim());
  const cols = answer.column_names ?? [];
  return (answer.data ?? []).map((r) => Object.fromEntries(cols.map((c, i) => [c, r[i]])));
};

export type Status = {
  version?: string;
  mindsdb_version?: string;
  http_auth_enabled?: boolean;
  auth?: { http_auth_enabled?: boolean };
  [key: string]: unknown;
};

export const authEnabled = (s: Status) => Boolean(s.http_auth_enabled ?? s.auth?.http_auth_enabled);

/** GET /api/me: who the session or token belongs to (all null while sign-in is off). */
export type Me = {
  http_auth_enabled?: boolean;
  user: string | null;
  role: Role | null;
  project: string | null;
  via: 'session' | 'token' | 'none';
};

export const login = (username: string, password: string) =>
  sendJson<unknown>('POST', '/api/login', { username, password });

export const logout = () => sendJson<unknown>('POST', '/api/logout', {});

/** Uploads a file as files.<name> with XMLHttpRequest, which reports upload progress. */
export const uploadFile = (
  name: string,
  file: File,
  onProgress: (sent: number, total: number) => void,
  onSent: () => void,
): Promise<{ name: string; row_count: number }> =>
  new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', `/api/files/${encodeURIComponent(name)}`);
    xhr.withCredentials = true;
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.upload.onload = () => onSent();
    xhr.onerror = () => reject(new Error('The upload failed (network error)'));
    xhr.onload = () => {
      if (xhr.status === 401) {
        for (const l of signInListeners) l();
        reject(new SignInRequired());
        return;
      }
      let body: { title?: string; detail?: string; name?: string; row_count?: number } = {};
      try {
        body = JSON.parse(xhr.responseText) as typeof body;
      } catch {
        /* not JSON */
      }
      if (xhr.status >= 200 && xhr.status < 300)
        resolve({ name: body.name ?? name, row_count: body.row_count ?? 0 });
      else reject(new HttpProblem(xhr.status, body.title ?? `HTTP ${xhr.status}`, body.detail ?? ''));
    };
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
