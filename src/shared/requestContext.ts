import { AsyncLocalStorage } from 'node:async_hooks';

/** Which door a request came in by. */
export type Interface = 'rest' | 'sql' | 'mysql' | 'agent' | 'system';

/** What is known about the request being served, wherever in its call chain code runs. */
export type RequestContext = { readonly requestId: string; readonly interface: Interface };

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` (and everything it awaits) as part of this request. */
export const withRequest = <T>(context: RequestContext, fn: () => T): T => storage.run(context, fn);

/** The request being served, if any (background work such as training has none). */
export const currentRequest = (): RequestContext | undefined => storage.getStore();
