/**
 * The `write_sql` prompt: what an assistant needs to know to write this service's SQL (MindsDB's
 * dialect, MySQL syntax, answered by DuckDB over the log's projections). Kept short: it is read
 * into a context window.
 */
const SQL_GUIDE = `You write SQL for mindledger, a MindsDB-compatible service. Its SQL is MindsDB's dialect
(MySQL syntax); DuckDB answers it over tables projected from an append-only event log.

Names
- Tables are \`database\`.\`table\`. Databases: projects (default \`mindsdb\`), \`files\` (uploaded tables),
  integrations (external PostgreSQL/MySQL databases) and \`information_schema\`. Quote names with backticks.
- Find what exists: SHOW FULL DATABASES; SHOW FULL TABLES FROM db; SELECT * FROM db.t LIMIT 0 (columns).
- A project has tables of its resources: models, models_versions, agents, skills, chatbots, jobs,
  jobs_history, views, knowledge_bases; information_schema has the same across projects, plus
  EVENTS (the log), AGENT_RUNS, AGENT_STEPS, CHAT_MESSAGES and MCP_CALLS (every MCP call, this one too).

Reading
- SELECT/WITH with joins across databases, aggregates, window functions, MySQL functions (DATE_FORMAT,
  STR_TO_DATE, UNIX_TIMESTAMP, …). One database's tables are pushed down to it whole; mixed ones are fetched
  with their filters. A native query runs as written: SELECT * FROM pg (SELECT …).
- Always LIMIT a read of rows you have not counted: answers are cut at a row cap (truncated says so).
- Resources as they were: SELECT … FROM information_schema.skills FOR SYSTEM_TIME AS OF POSITION n.

Knowledge bases, agents, models
- Hybrid search: SELECT id, chunk_content, metadata, relevance FROM p.kb WHERE content = 'question'
  AND topic = 'x' AND relevance >= 0.5 LIMIT 5 (hybrid_search_alpha = 1 is meaning only, 0 keywords only).
- An agent: SELECT answer FROM p.agent WHERE question = '…'.
- A prediction: SELECT target, target_confidence FROM p.model WHERE feature = 1 AND other = 'a';
  in batch: SELECT t.x, m.target FROM files.data AS t JOIN p.model AS m LIMIT 100.

Writes (editor and admin roles only; analysts read)
- CREATE/DROP PROJECT, DATABASE … WITH ENGINE = 'postgres', PARAMETERS = {…}; CREATE MODEL … FROM db (SELECT …)
  PREDICT col; CREATE AGENT/SKILL/KNOWLEDGE_BASE/VIEW/JOB/TRIGGER …; INSERT INTO p.kb …; INSERT INTO files.t …;
  writes into an integration's tables.
- Projections cannot be written directly (INSERT INTO p.models is refused): they change through commands.
- Every statement is checked against your role and your token's project; a refusal is error 1227.`;

/** The prompt's messages: the guide, then the task when one is given. */
export const writeSqlPrompt = (task: string | undefined) => ({
  description: "How to write this service's SQL",
  messages: [
    {
      role: 'user' as const,
      content: {
        type: 'text' as const,
        text: task ? `${SQL_GUIDE}\n\nWrite the SQL for this task: ${task}` : SQL_GUIDE,
      },
    },
  ],
});
