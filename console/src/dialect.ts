import { MySQL, SQLDialect } from '@codemirror/lang-sql';

/**
 * The SQL this service takes, for highlighting and completion: MySQL's lexical rules (backquotes,
 * `#` comments, double-quoted strings), the query words DuckDB runs behind the MySQL dialect, and
 * MindsDB's statements (src/sql/grammar.ts). Not the MySQL client's commands (`NOPAGER`, `TEE`) nor
 * the standard's unused reserved words (`CURRENT_TRANSFORM_GROUP_FOR_TYPE`), which @codemirror's
 * MySQL dialect lists and nothing here accepts.
 */
const QUERY = `
  select from where group by having order limit offset asc desc distinct all as on using
  join inner left right full outer cross natural union intersect except
  with recursive case when then else end and or not in is null like ilike between exists
  any some true false interval
  insert into values update set delete replace create drop alter table view if exists
  explain describe desc show use
  databases schemas tables columns full status variables warnings errors engines handlers
  charset character collation
  over partition window rows range unbounded preceding following current row
  cast as of
`;

/** MindsDB's statements and their clauses. */
const MINDSDB = `
  model models predictor predictors predict retrain finetune forget
  project projects database engine parameters
  skill skills agent agents chatbot chatbots knowledge_base knowledge_bases
  ml_engine ml_engines job jobs every start trigger triggers
  horizon
`;

const TYPES = `
  boolean bool tinyint smallint int integer bigint hugeint float real double decimal numeric
  varchar char text date time timestamp datetime json blob
`;

/** Functions DuckDB answers, the ones people type most. */
const FUNCTIONS = `
  count sum avg min max round floor ceil abs coalesce nullif greatest least
  lower upper length trim concat substring replace split_part regexp_matches
  now current_date current_timestamp date_trunc date_part extract strftime strptime
  year month day hour minute
  row_number rank dense_rank lag lead first_value last_value
  string_agg group_concat median stddev quantile_cont
`;

const words = (text: string) => [...new Set(text.split(/\s+/).filter(Boolean))].join(' ');

export const MindsDbSql = SQLDialect.define({
  ...MySQL.spec,
  keywords: words(QUERY + MINDSDB),
  types: words(TYPES),
  builtin: words(FUNCTIONS),
});
