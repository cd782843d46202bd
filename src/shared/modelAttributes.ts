/**
 * The attributes `DESCRIBE p.m.<attribute>` and `GET …/describe?attribute=` offer (MindsDB's): the
 * models slice describes them (src/models/present.ts), and the SQL interface reads a DESCRIBE's
 * last name part as one of them (src/sql/introspection.ts), which imports no capability.
 */
export const DESCRIBE_ATTRIBUTES = ['info', 'features', 'model', 'progress'] as const;
