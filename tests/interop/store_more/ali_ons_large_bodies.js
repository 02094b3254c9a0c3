// ali-ons sends bodies of 3 KiB, 5 KiB, 200 KiB and ~3.9 MiB (the client
// deflates every body of 4 KiB and more and sets the COMPRESSED sysFlag);
// the consumer must get each exact body back with that flag kept. A body
// still over the broker's maxMessageSize after deflate (random bytes) must
// be refused with code 13 (MESSAGE_ILLEGAL), and the daemon keeps serving:
// a small message sent after the refusal is delivered.
// argv: nameSrvPort topic maxMessageSize
// stdout: "READY", "SENT <name>", "REFUSED <code>", "GOT <name>", "RESULT ..."
'use strict';
const crypto = require('crypto');
const { Consumer, Producer, Message, options, hardTimeout, until, pause, run, exactlyOnce } =
  require('./ali_ons_common');

const [nsPort, topic, maxText] = process.argv.slice(2);
const maxMessageSize = Number(maxText);
hardTimeout(150000);
const COMPRESSED = 0x1; // MessageSysFlag.CompressedFlag

// text repeats (deflates well) or random bytes (does not)
function text(n, seed) {
  let s = '';
  while (s.length < n) s += `${seed}:${s.length} the quick brown fox jumps over the lazy dog\n`;
  return Buffer.from(s.slice(0, n));
}
const bodies = {
  small3k: text(3 * 1024, 'small'),
  text5k: text(5 * 1024, 'five'),
  random200k: crypto.randomBytes(200 * 1024),
  random3_9m: crypto.randomBytes(Math.floor(3.9 * 1024 * 1024)),
  text3_9m: text(Math.floor(3.9 * 1024 * 1024), 'big'),
  after: Buffer.from('sent after the refusal'),
};

run(async problems => {
  const common = options(nsPort);
  const seen = new Map();
  const consumer = new Consumer({ ...common, consumerGroup: 'cg_large', instanceName: 'c_large' });
  consumer.on('error', err => console.error('consumer error:', err.message));
  consumer.subscribe(topic, '*', async msg => {
    const name = msg.properties.name;
    const want = bodies[name];
    if (!want) problems.push(`unknown message ${name}`);
    else if (!Buffer.isBuffer(msg.body) || !msg.body.equals(want))
      problems.push(`${name}: body of ${msg.body && msg.body.length} bytes differs`);
    else if (want.length >= 4096 && !(msg.sysFlag & COMPRESSED))
      problems.push(`${name}: COMPRESSED flag lost (sysFlag ${msg.sysFlag})`);
    else if (want.length < 4096 && (msg.sysFlag & COMPRESSED))
      problems.push(`${name}: COMPRESSED flag on an uncompressed body`);
    seen.set(name, (seen.get(name) || 0) + 1);
    console.log(`GOT ${name}`);
  });
  await consumer.ready();
  const producer = new Producer({ ...common, producerGroup: 'pg_large', instanceName: 'p_large' });
  await producer.ready();
  console.log('READY');

  async function send(name, body) {
    const m = new Message(topic, 'Large', body);
    m.properties.name = name;
    return producer.send(m);
  }
  for (const name of ['small3k', 'text5k', 'random200k', 'random3_9m', 'text3_9m']) {
    const r = await send(name, bodies[name]);
    if (r.sendStatus !== 'SEND_OK') problems.push(`send ${name}: ${r.sendStatus}`);
    console.log(`SENT ${name}`);
  }
  // random bytes do not shrink: still over the limit after deflate
  const tooBig = crypto.randomBytes(maxMessageSize + 256 * 1024);
  try {
    await send('tooBig', tooBig);
    problems.push('a body over maxMessageSize was accepted');
  } catch (err) {
    console.log(`REFUSED ${err.code}`);
    if (err.code !== 13) problems.push(`over-size send: code ${err.code} (${err.message})`);
  }
  const r = await send('after', bodies.after);
  if (r.sendStatus !== 'SEND_OK') problems.push(`send after refusal: ${r.sendStatus}`);

  const names = Object.keys(bodies);
  if (!(await until(() => names.every(n => seen.has(n)), 60000)))
    problems.push(`missing: ${names.filter(n => !seen.has(n)).join(' ')}`);
  await pause(1500); // a duplicate would come with the next pulls
  exactlyOnce(problems, 'cg_large', seen, names);
  await consumer.close();
  await producer.close();
});
