import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { statement } from '../../src/store/statement.js';
import { startTestApi } from '../support/api.js';
import { stopOwnCluster } from '../support/database.js';

after(stopOwnCluster);

test('a statement without parameters runs prepared, as one with parameters does (not as a simple query)', async () => {
  const { store, chain, close } = await startTestApi({ engine: 'postgres' });
  try {
    await chain.block();
    await chain.block();
    const latestHeight = statement<{ block_height: number }, []>(
      'SELECT block_height FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1 /* statement test */',
    );
    const atHeight = statement<{ block_height: number }, [height: number]>(
      'SELECT block_height FROM blocks WHERE canonical AND block_height = $1::integer /* statement test */',
    );
    const connection = await store.sql.reserve();
    try {
      assert.equal((await latestHeight(connection))[0].block_height, 2);
      assert.equal((await latestHeight(connection))[0].block_height, 2);
      assert.equal((await atHeight(connection, 1))[0].block_height, 1);
      const prepared = await connection<{ statement: string }[]>`
        SELECT statement FROM pg_prepared_statements WHERE statement LIKE 'SELECT block_height FROM blocks%'`;
      assert.deepEqual(
        prepared.map((row) => (row.statement.includes('ORDER BY') ? 'latest' : 'at height')).sort(),
        ['at height', 'latest'],
        'both statements are prepared on the connection, once each',
      );
    } finally {
      connection.release();
    }
  } finally {
    await close();
  }
});
