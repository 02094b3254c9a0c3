// Messages and committed offsets survive a daemon restart (the C test stops
// the daemon with SIGTERM between the two phases and starts it again on the
// same conf.d/ and state/).
// phase "before": group cg_resume consumes the first K messages, drains and
//   closes (close() commits its offsets); then all N-K others are sent.
// phase "after": a new group cg_fresh reading from the first offset gets
//   exactly the N messages with their bodies, and cg_resume exactly the
//   N-K it had not consumed.
// phase "after_crash" (the daemon was killed with SIGKILL instead): cg_fresh
//   gets exactly the N messages with their bodies (the recovery rebuilds
//   the queues from the commit log, nothing lost or doubled); cg_resume is
//   not checked, its offsets may not have been written yet (as in Java,
//   which writes them every 5 s).
// Bodies depend on the index only; every 8th is 6 KiB (stored deflated).
// argv: nameSrvPort topic before|after|after_crash N K
// stdout: "READY", "<group> <idx>", "RESULT ..."
'use strict';
const { Consumer, Producer, Message, options, hardTimeout, until, pause, drained, run,
  exactlyOnce } = require('./ali_ons_common');

const [nsPort, topic, phase, nText, kText] = process.argv.slice(2);
const N = Number(nText);
const K = Number(kText);
hardTimeout(150000);

function body(i) {
  const line = `persisted-${i};`;
  return Buffer.from(i % 8 === 0 ? line.repeat(Math.ceil(6144 / line.length)) : line);
}
const range = (a, b) => Array.from({ length: b - a }, (_, k) => a + k);

run(async problems => {
  const common = options(nsPort);
  function consumer(group, extra, seen) {
    const c = new Consumer({ ...common, ...extra, consumerGroup: group, instanceName: `i_${group}` });
    c.on('error', err => console.error(`consumer ${group} error:`, err.message));
    c.subscribe(topic, '*', async msg => {
      const i = Number(msg.properties.idx);
      if (!msg.body.equals(body(i))) problems.push(`${group} idx ${i}: body differs`);
      seen.set(i, (seen.get(i) || 0) + 1);
      console.log(`${group} ${i}`);
    });
    return c;
  }

  if (phase === 'before') {
    const producer = new Producer({ ...common, producerGroup: 'pg_persist', instanceName: 'p' });
    await producer.ready();
    const send = async i => {
      const m = new Message(topic, 'P', body(i));
      m.properties.idx = String(i);
      const r = await producer.send(m);
      if (r.sendStatus !== 'SEND_OK') problems.push(`send ${i}: ${r.sendStatus}`);
    };
    const seen = new Map();
    const c = consumer('cg_resume', {}, seen);
    await c.ready();
    console.log('READY');
    for (const i of range(0, K)) await send(i);
    if (!(await until(() => seen.size === K && drained(c), 60000)))
      problems.push(`cg_resume handled ${seen.size} of ${K}`);
    await c.close();
    exactlyOnce(problems, 'cg_resume before', seen, range(0, K));
    for (const i of range(K, N)) await send(i);
    await producer.close();
    return;
  }

  const crashed = phase === 'after_crash';
  const fresh = new Map();
  const resumed = new Map();
  const f = consumer('cg_fresh', { consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET' }, fresh);
  await f.ready();
  const r = crashed ? null : consumer('cg_resume', {}, resumed);
  if (r) await r.ready();
  console.log('READY');
  const complete = () => range(0, N).every(i => fresh.has(i)) &&
    (crashed || range(K, N).every(i => resumed.has(i)));
  if (!(await until(complete, 60000)))
    problems.push(`after the restart cg_fresh got ${fresh.size} of ${N}, cg_resume ${resumed.size} of ${N - K}`);
  await pause(1500); // a duplicate would come with the next pulls
  exactlyOnce(problems, 'cg_fresh', fresh, range(0, N));
  if (r) exactlyOnce(problems, 'cg_resume', resumed, range(K, N));
  await f.close();
  if (r) await r.close();
});
