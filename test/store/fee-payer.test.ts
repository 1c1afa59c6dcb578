import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { feePayer, senderPaysRow, sponsorPaysRow, type FeePayerColumns } from '../../src/store/fee-payer.js';
import { openTestDatabase, stopOwnCluster } from '../support/database.js';

after(stopOwnCluster);

// The JS rule (ingest's running balances) and its SQL halves (the balance reads over stored rows) name the
// same payer for every kind of row: each principal is the payer in JS exactly when one SQL half admits it.
test('the fee payer: the sponsor of a sponsored tx, else the sender, in JS and in SQL alike', async () => {
  const rows: FeePayerColumns[] = [
    { sender_address: 'SP1SENDER', sponsored: false, sponsor_address: null },
    { sender_address: 'SP1SENDER', sponsored: true, sponsor_address: 'SP2SPONSOR' },
    // a sponsor address left on a non-sponsored row is not the payer
    { sender_address: 'SP1SENDER', sponsored: false, sponsor_address: 'SP2SPONSOR' },
    // self-sponsored
    { sender_address: 'SP1SENDER', sponsored: true, sponsor_address: 'SP1SENDER' },
  ];
  assert.deepEqual(rows.map(feePayer), ['SP1SENDER', 'SP2SPONSOR', 'SP1SENDER', 'SP1SENDER']);

  const db = await openTestDatabase('postgres');
  try {
    for (const row of rows) {
      for (const principal of ['SP1SENDER', 'SP2SPONSOR']) {
        const [answer] = await db.sql.unsafe<{ sender: boolean; sponsor: boolean }[]>(
          `SELECT ${senderPaysRow('t', '$1')} AS sender, coalesce(${sponsorPaysRow('t', '$1')}, false) AS sponsor
           FROM (SELECT $2::text AS sender_address, $3::boolean AS sponsored, $4::text AS sponsor_address) AS t`,
          [principal, row.sender_address, row.sponsored, row.sponsor_address],
        );
        const paysInSql = answer.sender || answer.sponsor;
        assert.equal(paysInSql, feePayer(row) === principal, `${JSON.stringify(row)} paid by ${principal}`);
        assert.ok(!(answer.sender && answer.sponsor), 'at most one half admits a row');
      }
    }
  } finally {
    await db.close();
  }
});
