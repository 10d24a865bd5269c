/**
 * The SQL backends of the suites run on every database: SQLite (a temp file, always), PostgreSQL
 * and MySQL/MariaDB (when their servers are configured, see servers.ts). Each `create()` makes its
 * own database and `drop()` removes it, so parallel runs on the shared servers never meet.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { servers } from './servers.js';

export interface Backend {
  name: string;
  available: unknown;
  variable: string;
  /** Creates a fresh, empty database; returns its URL and how to drop it. */
  create(): Promise<{ url: string; drop(): Promise<void> }>;
}

const uniqueName = () => `sluice_t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;

function withDatabase(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export const backends: Backend[] = [
  {
    name: 'sqlite',
    available: true,
    variable: '',
    async create() {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-storage-'));
      return { url: `sqlite:${join(dir, 'nested', 'sluice.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'postgres',
    available: servers.pgUrl,
    variable: 'SLUICE_TEST_PG_URL',
    async create() {
      const adminUrl = servers.pgUrl!;
      const name = uniqueName();
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      return {
        url: withDatabase(adminUrl, name),
        async drop() {
          const client = new pg.Client({ connectionString: adminUrl });
          await client.connect();
          await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          await client.end();
        },
      };
    },
  },
  {
    name: 'mysql',
    available: servers.mysqlUrl,
    variable: 'SLUICE_TEST_MYSQL_URL',
    async create() {
      const adminUrl = servers.mysqlUrl!;
      const name = uniqueName();
      const admin = await mysql.createConnection(adminUrl);
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      return {
        url: withDatabase(adminUrl, name),
        async drop() {
          const client = await mysql.createConnection(adminUrl);
          await client.query(`DROP DATABASE IF EXISTS ${name}`);
          await client.end();
        },
      };
    },
  },
];
