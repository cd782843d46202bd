/**
 * The dependency rules of the house (ARCHITECTURE.md), checked by `npm test`:
 * - no import cycles;
 * - nothing imports the composition root (src/app.ts) but the entry points, tests and benchmarks;
 * - infrastructure knows no capability;
 * - a capability (slice) uses another only through its state (`state.ts`: pure types and rules) or
 *   through ports it declares and the composition root fills; projects, the container every
 *   resource lives in, also offers its aggregate and its directory port;
 * - the SQL interface, like HTTP, is over every capability, but imports none, not even a type: it
 *   declares what it needs in its own terms (src/sql/ports.ts, src/sql/slicePorts.ts) and the
 *   composition root adapts the services to it (src/wiring/sqlPorts.ts, src/wiring/sqlSlices.ts).
 */
// Infrastructure and engines are listed; every other folder of src/ is a capability, so a new
// slice is held to the rules the day its folder appears, without editing this file.
const ENGINES =
  'config|eventlog|projection|duckdb|http|metrics|shared|storage|integrations|engines|channels|ledger|mysql|pgwire|doorway';
const INFRASTRUCTURE = `^src/(${ENGINES})/`;
/**
 * A capability's folder, captured as $1. Not slices: the SQL interface, the command-line tools and
 * src/wiring (the composition root's parts, with src/app.ts).
 */
const SLICES = `(?!(?:${ENGINES}|sql|cli|wiring)/)([A-Za-z]+)`;
const CAPABILITIES = `(?!(?:${ENGINES}|cli|wiring)/)([A-Za-z]+)`;
/**
 * What a slice's `sql.ts` (its SQL statements' handlers) may use of the SQL interface: the handler
 * types and helpers, the parsed statements' shapes, SQL errors and the lexical helpers.
 */
const SQL_STATEMENT_API = '^src/sql/(handlers|parse|grammar|errors|lexical|answers|deadline)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'Modules that import each other cannot be understood, tested or split apart on their own.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-composition-root',
      severity: 'error',
      comment: 'src/app.ts wires everything; depending on it couples a module to everything.',
      from: { path: '^(src|events|projections)/', pathNot: '^src/(main\\.ts|app\\.ts|wiring/)' },
      to: { path: '^src/(app\\.ts|wiring/)' },
    },
    {
      name: 'infrastructure-knows-no-capability',
      severity: 'error',
      comment: 'The log, the read model, HTTP and the engines serve every capability and name none.',
      from: { path: INFRASTRUCTURE },
      to: { path: `^src/${CAPABILITIES}/` },
    },
    {
      name: 'doors-meet-only-in-the-doorway',
      severity: 'error',
      comment:
        'The MySQL and PostgreSQL doors share what they share through src/doorway (the engine port, credentials, the accept loop): neither imports the other.',
      from: { path: '^src/(mysql|pgwire)/' },
      to: { path: '^src/(mysql|pgwire)/', pathNot: '^src/$1/' },
    },
    {
      name: 'the-doorway-knows-no-door',
      severity: 'error',
      comment: 'src/doorway is door-neutral: no protocol, no dialect of one.',
      from: { path: '^src/doorway/' },
      to: { path: '^src/(mysql|pgwire)/' },
    },
    {
      name: 'contract-knows-no-code',
      severity: 'error',
      comment: 'events/ is the log contract: only the shared bounds it checks.',
      from: { path: '^events/' },
      to: { path: '^(src|projections)/', pathNot: '^src/shared/' },
    },
    {
      name: 'slices-meet-through-state-or-ports',
      severity: 'error',
      comment:
        "A capability may read another's state.ts (and projects' aggregate and directory); anything else it needs is a port it declares.",
      from: { path: `^src/${SLICES}/` },
      to: {
        path: `^src/${CAPABILITIES}/`,
        pathNot: [
          '^src/$1/',
          `^src/${CAPABILITIES}/state\\.ts$`,
          '^src/projects/(aggregate|directory)\\.ts$',
          SQL_STATEMENT_API,
        ],
      },
    },
    {
      name: 'only-a-slices-sql-reaches-the-sql-interface',
      severity: 'error',
      comment:
        "A capability's SQL statements live in its sql.ts, which alone may use the SQL interface's statement API (handlers, parse, errors, lexical); the rest of a slice knows no SQL.",
      from: { path: `^src/${SLICES}/`, pathNot: `^src/${SLICES}/sql\\.ts$` },
      to: { path: '^src/sql/' },
    },
    {
      name: 'a-slices-sql-uses-the-statement-api',
      severity: 'error',
      comment: "A slice's sql.ts uses the SQL interface's statement API only, not its pipeline.",
      from: { path: `^src/${SLICES}/sql\\.ts$` },
      to: { path: '^src/sql/', pathNot: SQL_STATEMENT_API },
    },
    {
      name: 'sql-imports-no-capability',
      severity: 'error',
      comment:
        "The SQL interface declares what it needs of the capabilities in its own terms (src/sql/ports.ts, src/sql/slicePorts.ts); the composition root adapts the services and hands over the slices' statements, look-ups and catalogs (src/wiring/sqlPorts.ts, src/wiring/sqlSlices.ts). So src/sql names no capability, not even a type, and no capability's change of signature reaches it.",
      from: { path: '^src/sql/' },
      to: { path: `^src/${SLICES}/` },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(node_modules|dist|dist-bench|data)/' },
  },
};
