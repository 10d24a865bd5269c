/**
 * Column types that differ by dialect, so migrations stay one code path.
 * MySQL needs bounded VARCHARs in keys and MEDIUMTEXT for bodies over 64 KiB; SQLite and
 * PostgreSQL are happy with VARCHAR/TEXT. Tables on MySQL are `utf8mb4_bin`: ids, idempotency
 * keys and recipients compare byte-wise, as on the other two (MySQL's default collation would
 * make "Key" and "key" the same idempotency key).
 */
import { type ColumnDataType, type CreateTableBuilder, type Expression, sql } from 'kysely';
import type { Dialect } from '../database.js';

export interface ColumnTypes {
  /** Ids, short enumerations. */
  id: ColumnDataType;
  /** Names, keys, recipients: up to 512 characters, indexable everywhere. */
  shortText: ColumnDataType;
  /** JSON documents and message bodies. */
  longText: ColumnDataType | Expression<unknown>;
  /** Applies table options (MySQL: engine, charset, collation). */
  table<T extends string, C extends string>(builder: CreateTableBuilder<T, C>): CreateTableBuilder<T, C>;
}

const PORTABLE: ColumnTypes = { id: 'varchar(64)', shortText: 'varchar(512)', longText: 'text', table: (builder) => builder };

const COLUMN_TYPES: Readonly<Record<Dialect, ColumnTypes>> = {
  sqlite: PORTABLE,
  postgres: PORTABLE,
  mysql: {
    ...PORTABLE,
    longText: sql`mediumtext`,
    table: (builder) => builder.modifyEnd(sql`engine = InnoDB default charset = utf8mb4 collate = utf8mb4_bin`),
  },
};

export function columnTypes(dialect: Dialect): ColumnTypes {
  return COLUMN_TYPES[dialect];
}
