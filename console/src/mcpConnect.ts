/**
 * What the "Connect an AI client" panel writes: the MCP URL with its switches (docs/mcp.md,
 * "Switches on the URL") and each client's configuration for it. Pure, so the logic specs read it.
 */

/** The clients the panel writes a configuration for, and where each keeps it. */
export const MCP_CLIENTS = {
  cursor: { label: 'Cursor', file: '~/.cursor/mcp.json (or .cursor/mcp.json in a project)' },
  vscode: { label: 'VS Code', file: '.vscode/mcp.json' },
  'claude-code': { label: 'Claude Code', file: 'a command to run in a terminal' },
} as const;
export type McpClientKind = keyof typeof MCP_CLIENTS;

export type McpConnection = {
  /** The service's origin as the browser reaches it (`http://127.0.0.1:47334`). */
  readonly origin: string;
  /** `streamable`: `/mcp/` (the current transport); `sse`: `/mcp/sse`, as MindsDB's Cursor guide writes. */
  readonly transport: 'streamable' | 'sse';
  readonly readOnly: boolean;
  /** One project only, or every project the token may read (null). */
  readonly project: string | null;
  /** The tool groups offered, or every group (null). */
  readonly features: readonly string[] | null;
  /** The bearer token, or none when sign-in is off. */
  readonly token: string | null;
  /** The server's name in the client's list. */
  readonly name: string;
};

/** The switches as the URL's query (empty when nothing is narrowed); the order docs/mcp.md shows. */
export const mcpSwitchesQuery = (c: Pick<McpConnection, 'readOnly' | 'project' | 'features'>) => {
  const query = new URLSearchParams();
  if (c.readOnly) query.set('read_only', 'true');
  if (c.project !== null) query.set('project', c.project);
  if (c.features !== null) query.set('features', c.features.join(','));
  // URLSearchParams writes `,` as %2C: the server reads both; the plain comma reads as docs/mcp.md.
  return query.toString().replaceAll('%2C', ',');
};

export const mcpUrl = (c: McpConnection) => {
  const query = mcpSwitchesQuery(c);
  return `${c.origin}${c.transport === 'sse' ? '/mcp/sse' : '/mcp/'}${query ? `?${query}` : ''}`;
};

/** A token placeholder when none was made yet: the configuration still shows where it goes. */
export const TOKEN_PLACEHOLDER = '<create a token above>';

/** The client's configuration: a JSON file's text, or Claude Code's command. */
export const mcpClientConfig = (client: McpClientKind, c: McpConnection): string => {
  const url = mcpUrl(c);
  const authorization = c.token === null ? null : `Bearer ${c.token}`;
  const headers = authorization === null ? undefined : { Authorization: authorization };
  switch (client) {
    case 'cursor':
      return JSON.stringify({ mcpServers: { [c.name]: { url, headers } } }, null, 2);
    case 'vscode':
      return JSON.stringify(
        { servers: { [c.name]: { type: c.transport === 'sse' ? 'sse' : 'http', url, headers } } },
        null,
        2,
      );
    case 'claude-code': {
      const header =
        authorization === null ? '' : ` --header ${shellQuoted(`Authorization: ${authorization}`)}`;
      return `claude mcp add --transport ${c.transport === 'sse' ? 'sse' : 'http'} ${shellQuoted(c.name)} ${shellQuoted(url)}${header}`;
    }
  }
};

/** A word for a POSIX shell: single-quoted, a quote inside closed, escaped and reopened. */
const shellQuoted = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
