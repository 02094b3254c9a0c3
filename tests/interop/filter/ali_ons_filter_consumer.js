// One ali-ons push consumer with a filtered subscription, driven over
// stdin/stdout by test_filter_ali_ons.
// argv: nameSrvPort group topic instanceName sql92 EXPR
//       nameSrvPort group topic instanceName tags TAG...  (joined with " || ")
// stdout: "READY <clientId>", "SUB <subscriptionData as ali-ons built it>",
//         "HASH <[utils.hashCode(tag) for each TAG]>" (tags only), "CLOSED"
// stdin:  "close"
'use strict';
const readline = require('readline');
const { Consumer } = require('ali-ons');
const utils = require('ali-ons/lib/utils');

const [nsPort, group, topic, instance, kind, ...rest] = process.argv.slice(2);
const quiet = { info() {}, debug() {}, warn() {}, error(...a) { console.error(...a); } };
const httpclient = { request() { throw new Error('no address server: nameSrv is set'); } };

// a stuck client must never outlive the test
setTimeout(() => { console.error('ali_ons_filter_consumer: hard timeout'); process.exit(3); }, 90000).unref();

let subExpression;
if (kind === 'sql92') {
  subExpression = { expressionType: 'SQL92', subString: rest[0] };
} else if (kind === 'tags') {
  subExpression = rest.join(' || ');
} else {
  console.error(`ali_ons_filter_consumer: unknown kind ${kind}`);
  process.exit(2);
}

const consumer = new Consumer({
  httpclient,
  logger: quiet,
  nameSrv: `127.0.0.1:${nsPort}`,
  consumerGroup: group,
  instanceName: instance,
  clientIP: '127.0.0.1',
  rebalanceInterval: 1000,
});
consumer.on('error', err => console.error('consumer error:', err.message));
consumer.subscribe(topic, subExpression, async () => {});

(async () => {
  await consumer.ready();
  console.log(`READY ${consumer._mqClient.clientId}`);
  console.log('SUB ' + JSON.stringify(consumer.subscriptions.get(topic).subscriptionData));
  if (kind === 'tags') console.log('HASH ' + JSON.stringify(rest.map(t => utils.hashCode(t))));
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (line.trim() === 'close') {
      await consumer.close();
      console.log('CLOSED');
      process.exit(0);
    }
  }
  // stdin closed without "close": the test is gone, do not linger
  await consumer.close();
  process.exit(4);
})().catch(err => { console.error('ali_ons_filter_consumer failed:', err); process.exit(2); });
