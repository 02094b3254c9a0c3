// One ali-ons push consumer driven over stdin/stdout by the interop test.
// argv: nameSrvPort group topic instanceName
// stdout: "READY <clientId>", "QUEUES <n>", "COMMITTED q=offset,...", "CLOSED"
// stdin:  "commit <base>" (offset base+queueId for every owned queue), "close"
'use strict';
const readline = require('readline');
const { Consumer } = require('ali-ons');

const [nsPort, group, topic, instance] = process.argv.slice(2);
const quiet = { info() {}, debug() {}, warn() {}, error(...a) { console.error(...a); } };
const httpclient = { request() { throw new Error('no address server: nameSrv is set'); } };

// a stuck client must never outlive the test
setTimeout(() => { console.error('ali_ons_consumer: hard timeout'); process.exit(3); }, 120000).unref();

const consumer = new Consumer({
  httpclient,
  logger: quiet,
  nameSrv: `127.0.0.1:${nsPort}`,
  consumerGroup: group,
  instanceName: instance,
  clientIP: '127.0.0.1',
  rebalanceInterval: 1000,
  persistConsumerOffsetInterval: 1000,
});
consumer.on('error', err => console.error('consumer error:', err.message));
consumer.subscribe(topic, '*', async () => {});

async function ownedQueues(deadlineMs) {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    const mqs = [...consumer.processQueueTable.values()].map(p => p.messageQueue)
      .filter(mq => mq.topic === topic);
    if (mqs.length) return mqs;
    await new Promise(r => setTimeout(r, 100));
  }
  return [];
}

(async () => {
  await consumer.ready();
  console.log(`READY ${consumer._mqClient.clientId}`);
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const [cmd, arg] = line.trim().split(/\s+/);
    if (cmd === 'commit') {
      const mqs = await ownedQueues(30000);
      for (const mq of mqs) consumer._offsetStore.updateOffset(mq, Number(arg) + mq.queueId, false);
      await consumer.persistConsumerOffset();
      console.log('COMMITTED ' + mqs.map(mq => `${mq.queueId}=${Number(arg) + mq.queueId}`).join(','));
    } else if (cmd === 'close') {
      await consumer.close();
      console.log('CLOSED');
      process.exit(0);
    }
  }
})().catch(err => { console.error('ali_ons_consumer failed:', err); process.exit(2); });
