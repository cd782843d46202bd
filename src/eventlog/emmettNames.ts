/**
 * As Emmett 0.42 names a stream's type (its `stream_type` column, on both stores): the name's part
 * before its first dash, `emt:unknown` for a name without one.
 */
export const streamTypeOf = (stream: string) => {
  const [first, ...rest] = stream.split('-');
  return first && rest.length > 0 ? first : 'emt:unknown';
};
