// Transactional half messages as far as ali-ons goes: its producer sends a
// message whose TRAN_MSG property is set as a prepared (half) message, but
// it has no transaction API (no END_TRANSACTION, and it ignores the
// broker's CHECK_TRANSACTION_STATE). So the halves come from ali-ons and
// END_TRANSACTION (37) goes over the producer's own connection with its
// remoting layer, with the fields Java's producer sends. Proven: a half is
// never delivered while unresolved; a committed half is delivered once, body
// intact; a rolled back one never.
// argv: nameSrvPort topic
// stdout: "READY", "GOT <name>", "RESULT ..."
'use strict';
const RemotingCommand = require('ali-ons/lib/protocol/command/remoting_command');
const { Consumer, Producer, Message, options, hardTimeout, until, pause, run } =
  require('./ali_ons_common');

const [nsPort, topic] = process.argv.slice(2);
hardTimeout(150000);
const END_TRANSACTION = 37;
const COMMIT = 8; // MessageSysFlag.TRANSACTION_COMMIT_TYPE
const ROLLBACK = 12; // MessageSysFlag.TRANSACTION_ROLLBACK_TYPE
const PRODUCER_GROUP = 'pg_tx';

run(async problems => {
  const common = options(nsPort);
  const seen = new Map();
  const consumer = new Consumer({ ...common, consumerGroup: 'cg_tx', instanceName: 'c' });
  consumer.on('error', err => console.error('consumer error:', err.message));
  consumer.subscribe(topic, '*', async msg => {
    const name = msg.properties.name;
    if (msg.body.toString() !== `tx-body-${name}`) problems.push(`${name} body ${msg.body}`);
    seen.set(name, (seen.get(name) || 0) + 1);
    console.log(`GOT ${name}`);
  });
  await consumer.ready();
  const producer = new Producer({ ...common, producerGroup: PRODUCER_GROUP, instanceName: 'p' });
  await producer.ready();
  console.log('READY');

  async function send(name, half) {
    const m = new Message(topic, 'Tx', Buffer.from(`tx-body-${name}`));
    m.properties.name = name;
    if (half) { // what Java's sendMessageInTransaction adds
      m.properties.TRAN_MSG = 'true';
      m.properties.PGROUP = PRODUCER_GROUP;
    }
    const r = await producer.send(m);
    if (r.sendStatus !== 'SEND_OK') problems.push(`send ${name}: ${r.sendStatus}`);
    return r;
  }
  // one plain message per queue (round robin): once all are consumed, every
  // queue of the topic has been pulled past anything sent before them
  async function markers(round) {
    const names = [0, 1, 2, 3].map(q => `marker-${round}-${q}`);
    for (const n of names) await send(n, false);
    if (!(await until(() => names.every(n => seen.has(n)), 60000)))
      problems.push(`markers of round ${round} missing`);
  }
  async function end(r, commitOrRollback) {
    const addr = producer._mqClient.findBrokerAddressInPublish(r.messageQueue.brokerName);
    // the offset message id ends with the commit log offset (16 hex digits)
    const header = {
      producerGroup: PRODUCER_GROUP,
      tranStateTableOffset: r.queueOffset,
      commitLogOffset: Number(BigInt(`0x${r.msgId.slice(-16)}`)),
      commitOrRollback,
      fromTransactionCheck: false,
      msgId: r.msgId,
    };
    const cmd = RemotingCommand.createRequestCommand(END_TRANSACTION, header);
    const resp = await producer._mqClient.invoke(addr, cmd, 5000);
    if (resp.code !== 0) problems.push(`END_TRANSACTION ${commitOrRollback}: code ${resp.code} ${resp.remark}`);
  }

  const toCommit = await send('commit', true);
  const toRollback = await send('rollback', true);
  await send('pending', true);
  await markers(1);
  for (const n of ['commit', 'rollback', 'pending'])
    if (seen.has(n)) problems.push(`half message ${n} delivered before END_TRANSACTION`);
  await end(toCommit, COMMIT);
  await end(toRollback, ROLLBACK);
  if (!(await until(() => seen.has('commit'), 60000))) problems.push('committed half not delivered');
  await markers(2);
  await pause(1500); // a duplicate would come with the next pulls
  if (seen.get('commit') !== 1) problems.push(`commit delivered ${seen.get('commit')} times`);
  for (const n of ['rollback', 'pending'])
    if (seen.has(n)) problems.push(`${n} delivered`);
  await consumer.close();
  await producer.close();
});
