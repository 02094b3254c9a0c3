// proxy_transaction.js — transactional messages of rocketmq-client-nodejs
// (RocketMQ 5.x, gRPC) through rmqhost's proxy and store: a half message
// committed by the producer is consumed, one rolled back is not; two left
// unresolved are checked back by the store through the producer's Telemetry
// stream (RecoverOrphanedTransactionCommand) and the checker's COMMIT /
// ROLLBACK (EndTransaction, SOURCE_SERVER_CHECK) decides them: the first is
// consumed, the second is not. The checker answers by the body's prefix.
// After the sends it prints "CLIENT <clientId>" and waits for a line on
// stdin (the test pushes thread-stack and verify commands meanwhile).
// argv: proxyEndpoint topic
// stdout: "CHECKED <body>" per check-back, "RESULT ok" or "RESULT fail <why>"
'use strict';
const { Producer, SimpleConsumer } = require('rocketmq-client-nodejs');
const { TransactionResolution } = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/definition_pb');

const [endpoint, topic] = process.argv.slice(2);
const quiet = { info() {}, debug() {}, warn() {}, error() {} };
setTimeout(() => { console.log('RESULT fail hard timeout'); process.exit(3); }, 120000).unref();
let shuttingDown = 0;
process.on('uncaughtException', (e) => {
  if (shuttingDown > 0 && e && e.code === 14) return; // see proxy_produce_consume.js
  console.log(`RESULT fail uncaught ${e && e.stack}`);
  process.exit(1);
});

const checked = [];
const checker = {
  async check(view) {
    const body = view.body.toString();
    checked.push(body);
    console.log(`CHECKED ${body}`);
    return body.includes('commit') ? TransactionResolution.COMMIT : TransactionResolution.ROLLBACK;
  },
};

(async () => {
  const problems = [];
  const producer = new Producer({ endpoints: endpoint, namespace: '', topic, checker, logger: quiet });
  await producer.startup();
  const consumer = new SimpleConsumer({ endpoints: endpoint, namespace: '',
    consumerGroup: 'GrpcTxnGroup', subscriptions: new Map([[topic, '*']]),
    awaitDuration: 5000, logger: quiet });
  await consumer.startup();

  const sendTx = async (body) => {
    const tx = producer.beginTransaction();
    const receipt = await producer.send({ topic, tag: 'Tx', body: Buffer.from(body) }, tx);
    if (!receipt.transactionId) problems.push(`${body}: no transaction id`);
    return tx;
  };
  await (await sendTx('explicit-commit')).commit();
  await (await sendTx('explicit-rollback')).rollback();
  await sendTx('check-commit');   // left to the check-back
  await sendTx('check-rollback'); // left to the check-back
  // the test pushes commands to this producer meanwhile (rmqhostctl
  // proxy-client-command stack / verify)
  console.log(`CLIENT ${producer.clientId}`);
  await new Promise((resolve) => process.stdin.once('data', resolve));

  // receive until both committed ones came (the check-back one after the
  // store's transactionTimeOut and check interval), then one more poll
  const got = [];
  const end = Date.now() + 60000;
  while (Date.now() < end &&
         !(got.includes('check-commit') && got.includes('explicit-commit') &&
           checked.includes('check-rollback'))) {
    for (const m of await consumer.receive(16, 30000)) {
      got.push(m.body.toString());
      await consumer.ack(m);
    }
  }
  for (const m of await consumer.receive(16, 30000)) {
    got.push(m.body.toString());
    await consumer.ack(m);
  }
  const want = ['check-commit', 'explicit-commit'];
  if (got.slice().sort().join(',') !== want.join(','))
    problems.push(`consumed [${got.join(',')}], want [${want.join(',')}]`);
  for (const b of ['check-commit', 'check-rollback'])
    if (!checked.includes(b)) problems.push(`no check-back for ${b} (checked: ${checked.join(',')})`);

  shuttingDown++;
  await consumer.shutdown();
  await producer.shutdown();
  console.log(problems.length ? `RESULT fail ${problems.slice(0, 5).join('; ')}` : 'RESULT ok');
  process.exit(problems.length ? 1 : 0);
})().catch((e) => { console.log(`RESULT fail ${e && (e.stack || e)}`); process.exit(1); });
