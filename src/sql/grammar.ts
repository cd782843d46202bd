/**
 * The MindsDB-specific statements, as a PEG grammar (peggy). Anything that is plain SQL (SELECT,
 * WITH, …) is not parsed here but by DuckDB's own parser (see select.ts). Keywords are
 * case-insensitive; identifiers may be bare, `backticked` or "double-quoted".
 */
export const grammar = String.raw`
{{
  const kw = (s) => s.toUpperCase();
}}

start
  = _ s:statement _ (";" _)* !. { return s; }

statement
  = createModel / retrainModel / finetuneModel / dropModel / createMlEngine / dropMlEngine
  / createProject / dropProject / createDatabase / dropDatabase
  / createResource / updateResource / alterResource / dropResource
  / createKnowledgeBase / dropKnowledgeBase / evaluateKnowledgeBase / evaluateAgent / createKnowledgeBaseIndex / insertInto / deleteFrom
  / createJob / dropJob / createView / alterView / dropView
  / createTable / updateTable / dropTable / createTrigger / dropTrigger
  / createLlmBudget / dropLlmBudget
  / show / describe / use / set

createModel
  = CREATE __ replace:(OR __ REPLACE __)? (MODEL / PREDICTOR) ine:ifNotExists __ name:qualifiedName
    from:(__ FROM __ db:identifier _ q:parenthesized { return { database: db, query: q }; })?
    __ PREDICT __ target:identifier (__ AS __ identifier)?
    timeseries:timeseriesClauses
    using:(__ USING __ a:assignments { return a; })?
    { return { kind: 'CreateModel', name, replace: !!replace, ifNotExists: ine, from: from ?? null, target, timeseries, options: using ?? {} }; }

// MindsDB's time-series model: ORDER BY t [GROUP BY g, …] [WINDOW n] [HORIZON h], each optional
// here so that a missing ORDER BY is refused with a message rather than a parse error.
timeseriesClauses
  = groupFirst:(__ GROUP __ BY __ g:identifierList { return g; })?
    order:(__ ORDER __ BY __ o:identifier { return o; })?
    groupAfter:(__ GROUP __ BY __ g:identifierList { return g; })?
    window:(__ WINDOW __ n:number { return n; })?
    horizon:(__ HORIZON __ h:number { return h; })?
    {
      // The JS SDK writes GROUP BY before ORDER BY; MindsDB's docs, after: both are taken, once.
      if (groupFirst !== null && groupAfter !== null) error('GROUP BY is given twice');
      const group = groupFirst ?? groupAfter;
      if (order === null && group === null && window === null && horizon === null) return null;
      return { orderBy: order, groupBy: group ?? [], window, horizon };
    }

retrainModel
  = RETRAIN __ ((MODEL / PREDICTOR) __)? name:qualifiedName
    from:(__ FROM __ db:identifier _ q:parenthesized { return { database: db, query: q }; })?
    target:(__ PREDICT __ t:identifier { return t; })?
    timeseries:timeseriesClauses
    using:(__ USING __ a:assignments { return a; })?
    { return { kind: 'RetrainModel', name, from: from ?? null, target: target ?? null, timeseries, options: using ?? {} }; }

// MindsDB's FINETUNE: a new version learning from the model's data and these rows.
finetuneModel
  = FINETUNE __ ((MODEL / PREDICTOR) __)? name:dottedName
    __ FROM __ db:identifier _ q:parenthesized
    using:(__ USING __ a:assignments { return a; })?
    { return { kind: 'FinetuneModel', name, from: { database: db, query: q }, options: using ?? {} }; }

dropModel
  = DROP __ (MODEL / PREDICTOR) ie:ifExists __ name:dottedName
    { return { kind: 'DropModel', name, ifExists: ie }; }

createMlEngine
  = CREATE __ ML_ENGINE ine:ifNotExists __ name:identifier __ FROM __ handler:identifier
    using:(__ USING __ a:assignments { return a; })?
    { return { kind: 'CreateMlEngine', name, handler, ifNotExists: ine, options: using ?? {} }; }

knowledgeBaseWord = KNOWLEDGE (_ "_" _ / __) BASE

// MindsDB's docs separate the USING options with commas; its JS SDK writes MODEL = … PARAMS = {…}
// with none: both are taken.
createKnowledgeBase
  = CREATE __ replace:(OR __ REPLACE __)? knowledgeBaseWord ine:ifNotExists __ name:qualifiedName
    from:(__ FROM __ q:parenthesized { return q; })?
    using:(__ USING __ a:looseAssignments { return a; })?
    { return { kind: 'CreateKnowledgeBase', name, replace: !!replace, ifNotExists: ine, from: from ?? null, options: using ?? {} }; }

dropKnowledgeBase
  = DROP __ knowledgeBaseWord ie:ifExists __ name:qualifiedName f:(__ FORGET)?
    { return { kind: 'DropKnowledgeBase', name, ifExists: ie, forget: !!f }; }

// MindsDB's EVALUATE KNOWLEDGE_BASE p.kb USING test_table = db.t, version = 'doc_id', generate_data = {…}, …
evaluateKnowledgeBase
  = EVALUATE __ knowledgeBaseWord __ name:qualifiedName using:(__ USING __ a:looseAssignments { return a; })?
    { return { kind: 'EvaluateKnowledgeBase', name, options: using ?? {} }; }

// EVALUATE AGENT p.a FROM db.t | (SELECT …) [USING scoring = 'exact', …] (docs/agents.md "Evaluating an agent").
evaluateAgent
  = EVALUATE __ AGENT __ name:qualifiedName __ FROM _ from:(q:parenthesized { return { query: q }; } / t:(dotted / identifier) { return { table: t }; })
    using:(__ USING __ a:looseAssignments { return a; })?
    { return { kind: 'EvaluateAgent', name, from, options: using ?? {} }; }

// MindsDB's CREATE INDEX ON KNOWLEDGE_BASE p.kb (docs/evaluate-and-replay.md says what it does here).
createKnowledgeBaseIndex
  = CREATE __ INDEX __ ON __ knowledgeBaseWord __ name:qualifiedName
    { return { kind: 'CreateKnowledgeBaseIndex', name }; }

// The rows (a SELECT, or VALUES) are left as text: the SELECT runs like any other query.
insertInto
  = INSERT __ INTO __ target:qualifiedName columns:(_ "(" _ !(SELECT / WITH) c:identifierList _ ")" { return c; })?
    _ body:$(.+)
    { return { kind: 'Insert', target, columns: columns ?? null, body: body.trim() }; }

deleteFrom
  = DELETE __ FROM __ target:qualifiedName where:(__ WHERE __ w:$(.+) { return w.trim(); })?
    { return { kind: 'Delete', target, where: where ?? null }; }

identifierList = head:identifier tail:(_ "," _ i:identifier { return i; })* { return [head, ...tail]; }

looseAssignments
  = head:looseAssignment tail:((_ "," _ / __) a:looseAssignment { return a; })* _ ","?
    { const out = {}; for (const [k, v] of [head, ...tail]) out[k] = v; return out; }

looseAssignment = k:identifier _ "=" _ v:(dotted / value) { return [k.toLowerCase(), v]; }

dotted = head:identifier tail:(_ "." _ i:identifier { return i; })+ { return [head, ...tail].join('.'); }

// CREATE JOB [IF NOT EXISTS] p.j [AS] (stmt; stmt) [START '…'] [END '…'] [EVERY [n] unit] [IF (SELECT …)]:
// the statements are kept as text (each runs through the SQL service when the job fires).
createJob
  = CREATE __ JOB ine:ifNotExists __ name:qualifiedName _ (AS _)? body:parenthesized clauses:jobClause*
    {
      const c = Object.fromEntries(clauses);
      return { kind: 'CreateJob', name, ifNotExists: ine, query: body, start: c.start ?? null, end: c.end ?? null, every: c.every ?? null, ifQuery: c.if ?? null };
    }

jobClause
  = __ START __ s:jobDate { return ['start', s]; }
  / __ END __ s:jobDate { return ['end', s]; }
  / __ EVERY __ n:(x:number __ { return x; })? unit:identifier { return ['every', { n, unit }]; }
  / _ IF _ q:parenthesized { return ['if', q]; }

jobDate = string / NOW { return 'now'; }

dropJob
  = DROP __ JOB ie:ifExists __ name:qualifiedName f:(__ FORGET)?
    { return { kind: 'DropJob', name, ifExists: ie, forget: !!f }; }

// CREATE [OR REPLACE] VIEW [IF NOT EXISTS] p.v [AS] (SELECT …): the query is kept as written.
createView
  = CREATE __ replace:(OR __ REPLACE __)? VIEW ine:ifNotExists __ name:qualifiedName _ (AS _)? query:parenthesized
    { return { kind: 'CreateView', name, replace: !!replace, ifNotExists: ine, query }; }

alterView
  = ALTER __ VIEW __ name:qualifiedName _ (AS _)? query:parenthesized
    { return { kind: 'AlterView', name, query }; }

dropView
  = DROP __ VIEW ie:ifExists __ name:qualifiedName
    { return { kind: 'DropView', name, ifExists: ie }; }

// Writes into an external database's table (src/sql/writes/integrationWrites.ts): the SELECT, SET and
// WHERE parts are kept as written.
createTable
  = CREATE __ replace:(OR __ REPLACE __)? TABLE __ target:qualifiedName _ (AS _)? body:$(.+)
    { return { kind: 'CreateTable', target, replace: !!replace, body: body.trim() }; }

updateTable
  = UPDATE __ target:qualifiedName __ SET __ rest:$(.+)
    { return { kind: 'UpdateTable', target, set: rest.trim() }; }

dropTable
  = DROP __ TABLE ie:ifExists __ target:qualifiedName
    { return { kind: 'DropTable', target, ifExists: ie }; }

// CREATE TRIGGER [p.]t ON db.table [(columns)] (statements): the statements are kept as written.
createTrigger
  = CREATE __ TRIGGER __ name:qualifiedName __ ON __ target:qualifiedName
    columns:(_ "(" _ c:identifierList _ ")" &(_ "(") { return c; })? _ body:parenthesized
    { return { kind: 'CreateTrigger', name, target, columns: columns ?? null, query: body }; }

dropTrigger
  = DROP __ TRIGGER ie:ifExists __ name:qualifiedName f:(__ FORGET)?
    { return { kind: 'DropTrigger', name, ifExists: ie, forget: !!f }; }

dropMlEngine
  = DROP __ ML_ENGINE ie:ifExists __ name:identifier f:(__ FORGET)?
    { return { kind: 'DropMlEngine', name, ifExists: ie, forget: !!f }; }

// An LLM spend budget (docs/llm-models.md "Budgets"): CREATE [OR REPLACE] LLM_BUDGET FOR USER u |
// TOKEN 'id' | PROJECT p USING calls_per_day = …, tokens_per_day = …, calls_per_query = … (WITH
// taken too); a budget created again replaces the one before.
llmBudgetHolder
  = scope:(USER { return 'user'; } / TOKEN { return 'token'; } / PROJECT { return 'project'; }) __ subject:(string / identifier)
    { return { scope, subject }; }

createLlmBudget
  = CREATE __ (OR __ REPLACE __)? LLM_BUDGET __ FOR __ holder:llmBudgetHolder __ (USING / WITH) __ a:assignments
    { return { kind: 'CreateLlmBudget', ...holder, options: a }; }

dropLlmBudget
  = DROP __ LLM_BUDGET ie:ifExists __ FOR __ holder:llmBudgetHolder
    { return { kind: 'DropLlmBudget', ...holder, ifExists: ie }; }

parenthesized = "(" body:$parenBody ")" { return body.trim(); }
parenBody = (string / "(" parenBody ")" / [^()'"])*

createProject
  = CREATE __ PROJECT ine:ifNotExists __ name:identifier
    { return { kind: 'CreateProject', name, ifNotExists: ine }; }

dropProject
  = DROP __ (PROJECT / SCHEMA) ie:ifExists __ name:identifier
    { return { kind: 'DropProject', name, ifExists: ie }; }

createDatabase
  = CREATE __ (DATABASE / SCHEMA) ine:ifNotExists __ name:identifier
    opts:(__ (WITH __)? o:databaseOptions { return o; })?
    { return { kind: 'CreateDatabase', name, ifNotExists: ine, engine: opts?.engine ?? null, parameters: opts?.parameters ?? null }; }

databaseOptions
  = e:engineOption p:(_ ","? _ x:parametersOption { return x; })? { return { engine: e, parameters: p ?? null }; }
  / p:parametersOption e:(_ ","? _ x:engineOption { return x; })? { return { engine: e ?? null, parameters: p }; }

engineOption = ENGINE _ "=" _ v:(string / identifier) { return v; }
parametersOption = PARAMETERS _ "=" _ v:object { return v; }

dropDatabase
  = DROP __ DATABASE ie:ifExists __ name:identifier f:(__ FORGET)?
    { return { kind: 'DropDatabase', name, ifExists: ie, forget: !!f }; }

resourceKind
  = SKILL { return 'Skill'; } / AGENT { return 'Agent'; } / CHATBOT { return 'Chatbot'; }

createResource
  = CREATE __ resource:resourceKind ine:ifNotExists __ name:qualifiedName using:(__ USING __ a:assignments { return a; })?
    { return { kind: 'Create' + resource, name, ifNotExists: ine, options: using ?? {} }; }

updateResource
  = UPDATE __ resource:resourceKind __ name:qualifiedName __ SET __ a:assignments
    { return { kind: 'Update' + resource, name, options: a }; }

alterResource
  = ALTER __ resource:resourceKind __ name:qualifiedName __ (USING / SET) __ a:assignments
    { return { kind: 'Update' + resource, name, options: a }; }

dropResource
  = DROP __ resource:resourceKind ie:ifExists __ name:qualifiedName f:(__ FORGET)?
    { return { kind: 'Drop' + resource, name, ifExists: ie, forget: !!f }; }

show
  = SHOW __ full:(FULL __)? what:showTarget from:(__ (FROM / IN) __ d:identifier { return d; })? filter:showFilter?
    { return { kind: 'Show', what, full: !!full, from: from ?? null, like: filter?.like ?? null, where: filter?.where ?? null }; }

showTarget
  = w:(DATABASES / SCHEMAS) { return 'DATABASES'; }
  / FUNCTION __ STATUS { return 'FUNCTION STATUS'; }
  / PROCEDURE __ STATUS { return 'PROCEDURE STATUS'; }
  / KNOWLEDGE (_ "_" _ / __) BASES { return 'KNOWLEDGE_BASES'; }
  / ML_ENGINES { return 'ML_ENGINES'; }
  / w:(TABLES / PROJECTS / MODELS / PREDICTORS / AGENTS / SKILLS / CHATBOTS / JOBS / VIEWS / HANDLERS
      / VARIABLES / ENGINES / CHARSET / COLLATION / WARNINGS / ERRORS / TRIGGERS / STATUS) { return w === 'PREDICTORS' ? 'MODELS' : w; }
  / (CHARACTER __ SET) { return 'CHARSET'; }

showFilter
  = __ LIKE __ s:string { return { like: s }; }
  / __ WHERE __ w:$(.+) { return { where: w }; }

describe
  = (DESCRIBE / DESC) __ k:(describeKind __)? name:dottedName
    { return { kind: 'Describe', what: k ? k[0] : null, name }; }

describeKind
  = MODEL { return 'MODEL'; } / PREDICTOR { return 'MODEL'; } / AGENT { return 'AGENT'; } / SKILL { return 'SKILL'; }
  / CHATBOT { return 'CHATBOT'; } / DATABASE { return 'DATABASE'; } / PROJECT { return 'PROJECT'; }
  / ML_ENGINE { return 'ML_ENGINE'; } / JOB { return 'JOB'; } / VIEW { return 'VIEW'; }
  / KNOWLEDGE (_ "_" _ / __) BASE { return 'KNOWLEDGE_BASE'; }

use = USE __ name:identifier { return { kind: 'Use', name }; }

set = SET __ text:$(.+) { return { kind: 'Set', text }; }

ifNotExists = x:(__ IF __ NOT __ EXISTS)? { return !!x; }
ifExists = x:(__ IF __ EXISTS)? { return !!x; }

assignments
  = head:assignment tail:(_ "," _ a:assignment { return a; })* _ ","?
    { const out = {}; for (const [k, v] of [head, ...tail]) out[k] = v; return out; }

assignment = k:identifier _ "=" _ v:value { return [k.toLowerCase(), v]; }

value
  = string / number / boolean / null / list / object
  / i:identifier { return i; }

list = "[" _ items:(head:value tail:(_ "," _ v:value { return v; })* { return [head, ...tail]; })? _ ","? _ "]" { return items ?? []; }

object
  = "{" _ members:(head:member tail:(_ "," _ m:member { return m; })* { return [head, ...tail]; })? _ ","? _ "}"
    { const out = {}; for (const [k, v] of members ?? []) out[k] = v; return out; }

member = k:(string / identifier) _ ":" _ v:value { return [k, v]; }

boolean = TRUE { return true; } / FALSE { return false; }
null = NULL { return null; }

number = n:$("-"? [0-9]+ ("." [0-9]+)? ([eE] [+-]? [0-9]+)?) ![A-Za-z_] { return Number(n); }

string
  = "'" chars:("''" { return "'"; } / "\\'" { return "'"; } / "\\\\" { return "\\"; } / [^'])* "'" { return chars.join(''); }
  / '"' chars:('""' { return '"'; } / '\\"' { return '"'; } / "\\\\" { return "\\"; } / [^"])* '"' { return chars.join(''); }

qualifiedName
  = a:identifier b:(_ "." _ i:identifier { return i; })? { return b === null ? { project: null, name: a } : { project: a, name: b }; }

dottedName = head:identifier tail:(_ "." _ i:(identifier / $([0-9]+)) { return i; })* { return [head, ...tail]; }

identifier
  = "\u0060" chars:("\u0060\u0060" { return "\u0060"; } / [^\u0060])+ "\u0060" { return chars.join(''); }
  / '"' chars:('""' { return '"'; } / [^"])+ '"' { return chars.join(''); }
  / $([A-Za-z_][A-Za-z0-9_]*)

_ "whitespace" = ([ \t\r\n] / comment)*
__ "whitespace" = ([ \t\r\n] / comment)+
comment = "--" [^\n]* / "/*" (!"*/" .)* "*/"

CREATE = "CREATE"i !idchar
INSERT = "INSERT"i !idchar
INTO = "INTO"i !idchar
DELETE = "DELETE"i !idchar
SELECT = "SELECT"i !idchar
OR = "OR"i !idchar
REPLACE = "REPLACE"i !idchar
RETRAIN = "RETRAIN"i !idchar
FINETUNE = "FINETUNE"i !idchar
PREDICT = "PREDICT"i !idchar
AS = "AS"i !idchar
DROP = "DROP"i !idchar
EVALUATE = "EVALUATE"i !idchar
FORGET = "FORGET"i !idchar
UPDATE = "UPDATE"i !idchar
ALTER = "ALTER"i !idchar
PROJECT = "PROJECT"i !idchar
SCHEMA = "SCHEMA"i !idchar
DATABASE = "DATABASE"i !idchar
WITH = "WITH"i !idchar
ENGINE = "ENGINE"i !idchar
PARAMETERS = "PARAMETERS"i !idchar
SKILL = "SKILL"i !idchar
AGENT = "AGENT"i !idchar
CHATBOT = "CHATBOT"i !idchar
USING = "USING"i !idchar
SET = "SET"i !idchar
SHOW = "SHOW"i !idchar
FULL = "FULL"i !idchar
FROM = "FROM"i !idchar
IN = "IN"i !idchar
LIKE = "LIKE"i !idchar
WHERE = "WHERE"i !idchar
DESCRIBE = "DESCRIBE"i !idchar
DESC = "DESC"i !idchar
USE = "USE"i !idchar
IF = "IF"i !idchar
NOT = "NOT"i !idchar
EXISTS = "EXISTS"i !idchar
TRUE = "TRUE"i !idchar
FALSE = "FALSE"i !idchar
NULL = "NULL"i !idchar
DATABASES = "DATABASES"i !idchar { return 'DATABASES'; }
SCHEMAS = "SCHEMAS"i !idchar { return 'SCHEMAS'; }
TABLES = "TABLES"i !idchar { return 'TABLES'; }
TABLE = "TABLE"i !idchar
TRIGGER = "TRIGGER"i !idchar
ON = "ON"i !idchar
INDEX = "INDEX"i !idchar
PROJECTS = "PROJECTS"i !idchar { return 'PROJECTS'; }
MODELS = "MODELS"i !idchar { return 'MODELS'; }
PREDICTORS = "PREDICTORS"i !idchar { return 'PREDICTORS'; }
AGENTS = "AGENTS"i !idchar { return 'AGENTS'; }
SKILLS = "SKILLS"i !idchar { return 'SKILLS'; }
CHATBOTS = "CHATBOTS"i !idchar { return 'CHATBOTS'; }
JOBS = "JOBS"i !idchar { return 'JOBS'; }
VIEWS = "VIEWS"i !idchar { return 'VIEWS'; }
HANDLERS = "HANDLERS"i !idchar { return 'HANDLERS'; }
VARIABLES = "VARIABLES"i !idchar { return 'VARIABLES'; }
ENGINES = "ENGINES"i !idchar { return 'ENGINES'; }
CHARSET = "CHARSET"i !idchar { return 'CHARSET'; }
CHARACTER = "CHARACTER"i !idchar
COLLATION = "COLLATION"i !idchar { return 'COLLATION'; }
WARNINGS = "WARNINGS"i !idchar { return 'WARNINGS'; }
ERRORS = "ERRORS"i !idchar { return 'ERRORS'; }
TRIGGERS = "TRIGGERS"i !idchar { return 'TRIGGERS'; }
STATUS = "STATUS"i !idchar { return 'STATUS'; }
FUNCTION = "FUNCTION"i !idchar
PROCEDURE = "PROCEDURE"i !idchar
KNOWLEDGE = "KNOWLEDGE"i
BASES = "BASES"i !idchar
BASE = "BASE"i !idchar
ML_ENGINES = "ML_ENGINES"i !idchar
ML_ENGINE = "ML_ENGINE"i !idchar
LLM_BUDGET = "LLM_BUDGET"i !idchar
FOR = "FOR"i !idchar
USER = "USER"i !idchar
TOKEN = "TOKEN"i !idchar
MODEL = "MODEL"i !idchar
PREDICTOR = "PREDICTOR"i !idchar
ORDER = "ORDER"i !idchar
BY = "BY"i !idchar
GROUP = "GROUP"i !idchar
WINDOW = "WINDOW"i !idchar
HORIZON = "HORIZON"i !idchar
JOB = "JOB"i !idchar
VIEW = "VIEW"i !idchar
START = "START"i !idchar
END = "END"i !idchar
EVERY = "EVERY"i !idchar
NOW = "NOW"i !idchar
idchar = [A-Za-z0-9_]
`;
