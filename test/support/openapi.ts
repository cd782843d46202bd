/** The parts of the service's OpenAPI document the generated-request specs read (fuzz, hostile strings). */
export type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  $ref?: string;
};

export type Operation = {
  parameters?: { name: string; in: string; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
};

/** A schema with its `$ref` followed into the document's components. */
export const resolveSchema = (
  doc: { components?: { schemas?: Record<string, Schema> } },
  s: Schema,
): Schema => (s.$ref ? resolveSchema(doc, doc.components?.schemas?.[s.$ref.split('/').pop()!] ?? {}) : s);
