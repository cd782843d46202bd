import { COLUMN_TYPES, type Column, type ColumnType } from './types';

/**
 * A table's columns written as SQL writes them: `columns('NAME VARCHAR, PARAMS JSON, ENDED_AT
 * TIMESTAMP NULL', RESOURCE_STAMPS)`. Each part is either such a text (`NAME TYPE` or `NAME TYPE
 * NULL`, comma-separated, any blanks between) or columns as objects (a column whose cells are a
 * few `values`); the parts join in order. The compiler reads the text as the code does, so the row
 * type derived from the list (`RowOf`, table.ts) is what the objects would give, and a text it
 * cannot read (an unknown type, a column without a name, a name twice) does not compile.
 */
export const columns = <const P extends readonly ColumnsPart[]>(
  ...parts: P & CheckedParts<P>
): ColumnsOf<P> => {
  const list = parts.flatMap((part) =>
    typeof part === 'string' ? columnsOfText(part) : 'name' in part ? [part] : part,
  );
  const names = new Set<string>();
  for (const { name } of list) {
    if (names.has(name)) throw new Error(`Column ${name} is listed twice`);
    names.add(name);
  }
  return list as readonly Column[] as ColumnsOf<P>;
};

/** Some columns: as text (`NAME TYPE [NULL], …`), one as an object, or a list of objects. */
export type ColumnsPart = string | Column | readonly Column[];

const isColumnType = (word: string): word is ColumnType => (COLUMN_TYPES as readonly string[]).includes(word);

const columnsOfText = (text: string): Column[] =>
  text.split(',').map((item) => {
    const [name = '', type, nullable, ...more] = item.trim().split(/\s+/);
    if (name === '') throw new Error(`A column without a name in '${text}'`);
    if (type === undefined) throw new Error(`Column ${name} has no type in '${text}'`);
    if (!isColumnType(type)) throw new Error(`Column ${name} has an unknown type ${type} in '${text}'`);
    if ((nullable !== undefined && nullable !== 'NULL') || more.length > 0)
      throw new Error(`Column ${name} has more than NULL after its type in '${text}'`);
    return nullable ? { name, type, nullable: true } : { name, type };
  });

// The same reading, by the compiler, of the literal text.

/** Why the compiler refuses a columns text. */
type ColumnsError<M extends string> = { readonly 'malformed columns': M };

/** The text with its line breaks and tabs as spaces (a loop each: tail-recursive). */
type Spaced<S extends string> = S extends `${infer A}\n${infer B}`
  ? Spaced<`${A} ${B}`>
  : S extends `${infer A}\t${infer B}`
    ? Spaced<`${A} ${B}`>
    : S extends `${infer A}\r${infer B}`
      ? Spaced<`${A} ${B}`>
      : S;

type Trimmed<S extends string> = S extends ` ${infer R}`
  ? Trimmed<R>
  : S extends `${infer R} `
    ? Trimmed<R>
    : S;

/** One column of a text: its name, then its type, then NULL if it may hold none. */
type ColumnOf<Item extends string, Names extends string> =
  Trimmed<Item> extends `${infer N} ${infer Rest}`
    ? N extends Names
      ? ColumnsError<`column ${N} is listed twice`>
      : Trimmed<Rest> extends `${infer T} ${infer Null}`
        ? Trimmed<Null> extends 'NULL'
          ? T extends ColumnType
            ? { readonly name: N; readonly type: T; readonly nullable: true }
            : ColumnsError<`column ${N} has an unknown type ${T}`>
          : ColumnsError<`column ${N} has more than NULL after its type`>
        : Trimmed<Rest> extends ColumnType
          ? { readonly name: N; readonly type: Trimmed<Rest> }
          : ColumnsError<`column ${N} has an unknown type ${Trimmed<Rest>}`>
    : Trimmed<Item> extends ''
      ? ColumnsError<'a column without a name'>
      : ColumnsError<`column ${Trimmed<Item>} has no type`>;

/** The columns of a text, after `Acc` (the parts before it). */
type TextColumns<S extends string, Acc extends readonly Column[]> = S extends `${infer Item},${infer Rest}`
  ? ColumnOf<Item, Acc[number]['name']> extends infer C
    ? C extends Column
      ? TextColumns<Rest, readonly [...Acc, C]>
      : C
    : never
  : ColumnOf<S, Acc[number]['name']> extends infer C
    ? C extends Column
      ? readonly [...Acc, C]
      : C
    : never;

type PartColumns<Part, Acc extends readonly Column[]> = Part extends string
  ? string extends Part
    ? ColumnsError<'a columns text must be a literal (the row type is read from it)'>
    : TextColumns<Spaced<Part>, Acc>
  : Part extends Column
    ? Part['name'] extends Acc[number]['name']
      ? ColumnsError<`column ${Part['name']} is listed twice`>
      : readonly [...Acc, Part]
    : Part extends readonly Column[]
      ? readonly [...Acc, ...Part]
      : never;

/** The columns of the parts in order, or why they cannot be read. */
type Joined<P extends readonly unknown[], Acc extends readonly Column[] = readonly []> = P extends readonly [
  infer Part,
  ...infer Rest,
]
  ? PartColumns<Part, Acc> extends infer Next
    ? Next extends readonly Column[]
      ? Joined<Rest, Next>
      : Next
    : never
  : Acc;

/** What `columns(...parts)` gives: the column list, typed column by column. */
export type ColumnsOf<P extends readonly ColumnsPart[]> =
  Joined<P> extends infer C extends readonly Column[] ? C : never;

/** The parts as given when they read, and a type no argument list has (naming the fault) when not. */
type CheckedParts<P extends readonly ColumnsPart[]> =
  Joined<P> extends ColumnsError<infer M> ? readonly ColumnsError<M>[] : unknown;
