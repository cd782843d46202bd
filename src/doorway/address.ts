/**
 * A client's address as every door names it (logs, SHOW PROCESSLIST, the login limiter's counts,
 * the pre-authentication room): an IPv4 client on a dual-stack listener arrives IPv6-mapped
 * (`::ffff:10.0.0.1`) and is named without that prefix, so one client has one name whichever way
 * the socket was opened.
 */
export const plainAddress = (address: string): string => address.replace(/^::ffff:/, '');
