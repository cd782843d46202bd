import { columns } from '../../src/projection/columns';
import { CHANGE_STAMPS, NAME_AND_PROJECT } from '../../src/projection/resourceColumns';
import type { RowOf } from '../../src/projection/table';

/** True when A and B are the same type (not merely assignable one way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Compiles only when its type argument is `true`: the type-level assertions below fail `tsc`. */
const typeIs = <T extends true>(): T | undefined => undefined;

describe('columns', () => {
  it('reads each column as its name, its type and NULL when it may hold none, in order', () => {
    const list = columns('ID BIGINT, NAME VARCHAR NULL, TAGS VARCHAR[], AT TIMESTAMP');
    expect(list).toStrictEqual([
      { name: 'ID', type: 'BIGINT' },
      { name: 'NAME', type: 'VARCHAR', nullable: true },
      { name: 'TAGS', type: 'VARCHAR[]' },
      { name: 'AT', type: 'TIMESTAMP' },
    ]);
    typeIs<Equal<RowOf<typeof list>, { ID: bigint; NAME: string | null; TAGS: string[]; AT: Date }>>();
  });

  it('takes any blanks between words and columns, line breaks included', () => {
    const list = columns(`
      KEY   VARCHAR,
      \tSIZE BIGINT NULL ,DATA JSON
    `);
    expect(list).toStrictEqual(columns('KEY VARCHAR, SIZE BIGINT NULL, DATA JSON'));
    typeIs<Equal<RowOf<typeof list>, { KEY: string; SIZE: bigint | null; DATA: string }>>();
  });

  it('joins its parts in order: texts, a column as an object, a list of them', () => {
    const states = ['on', 'off'] as const;
    const list = columns(
      NAME_AND_PROJECT,
      'COUNT INTEGER NULL',
      { name: 'STATE', type: 'VARCHAR', values: states },
      [{ name: 'RATE', type: 'DOUBLE' }],
      CHANGE_STAMPS,
    );
    expect(list.map((c) => c.name).join(' ')).toBe('NAME PROJECT COUNT STATE RATE CREATED_AT UPDATED_AT');
    expect(list[3]).toStrictEqual({ name: 'STATE', type: 'VARCHAR', values: states });
    type Row = RowOf<typeof list>;
    typeIs<Equal<Row['COUNT'], number | null>>();
    typeIs<Equal<Row['STATE'], 'on' | 'off'>>();
    typeIs<Equal<keyof Row, 'NAME' | 'PROJECT' | 'COUNT' | 'STATE' | 'RATE' | 'CREATED_AT' | 'UPDATED_AT'>>();
  });

  it('refuses a type it does not know, at compile time and at load', () => {
    // @ts-expect-error: TEXT is no column type
    expect(() => columns('ID BIGINT, NAME TEXT')).toThrow('Column NAME has an unknown type TEXT');
    // @ts-expect-error: the types are upper case
    expect(() => columns('ID bigint')).toThrow('Column ID has an unknown type bigint');
  });

  it('refuses a column without a name or a type, or with more than NULL after its type', () => {
    // @ts-expect-error: nothing between the commas
    expect(() => columns('ID BIGINT, , NAME VARCHAR')).toThrow('A column without a name');
    // @ts-expect-error: a trailing comma leaves a column without a name
    expect(() => columns('ID BIGINT,')).toThrow('A column without a name');
    // @ts-expect-error: an empty text
    expect(() => columns('')).toThrow('A column without a name');
    // @ts-expect-error: no type
    expect(() => columns('ID BIGINT, NAME')).toThrow('Column NAME has no type');
    // @ts-expect-error: NOT NULL is not a column's text
    expect(() => columns('ID BIGINT NOT NULL')).toThrow('Column ID has more than NULL after its type');
  });

  it('refuses a column listed twice, in one text or across parts', () => {
    // @ts-expect-error: ID twice
    expect(() => columns('ID BIGINT, ID VARCHAR')).toThrow('Column ID is listed twice');
    // @ts-expect-error: NAME is in NAME_AND_PROJECT
    expect(() => columns(NAME_AND_PROJECT, 'NAME VARCHAR')).toThrow('Column NAME is listed twice');
    // @ts-expect-error: PROJECT, as an object, too
    expect(() => columns(NAME_AND_PROJECT, { name: 'PROJECT', type: 'VARCHAR' })).toThrow(
      'Column PROJECT is listed twice',
    );
  });

  it('wants a literal text, whose columns the compiler can read', () => {
    const text: string = 'ID BIGINT';
    // @ts-expect-error: a string of unknown text gives no row type
    expect(columns(text)).toStrictEqual([{ name: 'ID', type: 'BIGINT' }]);
  });
});
