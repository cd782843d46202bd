import { LlmError } from './errors';

type Attempt = {
  /** The caller's signal and the deadline, either aborting the request. */
  readonly signal: AbortSignal;
  /** Pushes the deadline back (a stream that keeps sending is alive). */
  restart(): void;
  done(): void;
  /** The SDK ends a stream quietly when its signal fires: this says why it ended, if it was us. */
  interruption(): LlmError | undefined;
  /** The error to throw for what the attempt caught: our deadline or the caller's cancel win over the SDK's error. */
  fail(error: unknown, model: string | undefined): LlmError;
};

/**
 * One attempt's signal: the caller's, plus our deadline of `timeoutMs`. The error mapping says
 * which of the two fired; anything else is `toLlmError`'s to explain.
 */
export const attemptSignal = (
  caller: AbortSignal | undefined,
  timeoutMs: number,
  toLlmError: (error: unknown, model: string | undefined) => LlmError,
): Attempt => {
  const deadline = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const restart = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      deadline.abort();
    }, timeoutMs);
  };
  restart();
  return {
    signal: caller ? AbortSignal.any([caller, deadline.signal]) : deadline.signal,
    restart,
    done: () => clearTimeout(timer),
    interruption: () =>
      timedOut
        ? new LlmError('timeout', `the provider did not answer within ${timeoutMs} ms`)
        : caller?.aborted
          ? new LlmError('aborted', 'the request was cancelled')
          : undefined,
    fail: (error, model) => {
      clearTimeout(timer);
      if (timedOut) return new LlmError('timeout', `the provider did not answer within ${timeoutMs} ms`);
      if (caller?.aborted) return new LlmError('aborted', 'the request was cancelled');
      return toLlmError(error, model);
    },
  };
};
