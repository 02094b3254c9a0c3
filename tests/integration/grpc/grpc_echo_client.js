// grpc_echo_client.js — drives the grpc_echo example plugin with @grpc/grpc-js
// (a real gRPC implementation): unary, server-streaming, bidi-streaming, a
// status with a message, an unknown method, a deadline, invoke_local.
// Usage: node grpc_echo_client.js HOST:PORT [tls CA_FILE]
//        node grpc_echo_client.js HOST:PORT reload
//   (reload: a Chat stream and three Hang calls are opened, "OPEN" printed,
//    and after the line "go" on stdin — the test reloads the plugin
//    meanwhile — the stream and new calls must still be answered and the
//    Hang calls ended UNAVAILABLE by the old generation's quiesce)
//        node grpc_echo_client.js HOST:PORT hold
//   (held calls, ABI 1.9: Later answered from another thread, Later calls
//    cancelled while their answer is on its way, then 30 Hang calls of
//    which 15 are cancelled, 5 more past their deadline; prints
//    "RESULT HUNG" and, after the line "exit" on
//    stdin, exits with the other 15 still open)
// Prints "CHECK name ok|FAIL detail" per check and "RESULT ok" or
// "RESULT FAIL ...".
'use strict';
const grpc = require('@grpc/grpc-js');
const fs = require('fs');

const [target, mode, caFile] = process.argv.slice(2);
const creds = mode === 'tls'
  ? grpc.credentials.createSsl(fs.readFileSync(caFile))
  : grpc.credentials.createInsecure();
const id = (b) => b;
const def = {
  Say: { path: '/rmqhost.example.Echo/Say', requestStream: false, responseStream: false,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
  Repeat: { path: '/rmqhost.example.Echo/Repeat', requestStream: false, responseStream: true,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
  Chat: { path: '/rmqhost.example.Echo/Chat', requestStream: true, responseStream: true,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
  Fail: { path: '/rmqhost.example.Echo/Fail', requestStream: false, responseStream: false,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
  Remote: { path: '/rmqhost.example.Echo/Remote', requestStream: false, responseStream: false,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
  Later: { path: '/rmqhost.example.Echo/Later', requestStream: false, responseStream: false,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
  Hang: { path: '/rmqhost.example.Echo/Hang', requestStream: false, responseStream: false,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
  Burst: { path: '/rmqhost.example.Echo/Burst', requestStream: false, responseStream: true,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
  Missing: { path: '/rmqhost.example.Echo/Missing', requestStream: false, responseStream: false,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
};
const Client = grpc.makeGenericClientConstructor(def, 'Echo');
const client = new Client(target, creds);
const deadline = () => Date.now() + 10000;

const failures = [];
function check(name, ok, detail) {
  console.log(`CHECK ${name} ${ok ? 'ok' : 'FAIL ' + detail}`);
  if (!ok) failures.push(`${name}: ${detail}`);
}
const unary = (m, buf, opts = {}) => new Promise((resolve) =>
  client[m](buf, new grpc.Metadata(), { deadline: deadline(), ...opts },
    (err, res) => resolve({ err, res })));

async function main() {
  // unary, with a body big enough to span several DATA frames
  const big = Buffer.alloc(200000, 7);
  big.write('hello', 0);
  let r = await unary('Say', big);
  check('unary_echo', !r.err && Buffer.compare(r.res, big) === 0,
    r.err ? r.err.message : `got ${r.res.length} bytes`);
  r = await unary('Say', Buffer.alloc(0));
  check('unary_empty', !r.err && r.res.length === 0, r.err ? r.err.message : 'non-empty');

  // server streaming: 5 copies then OK
  const got = await new Promise((resolve) => {
    const out = [];
    const s = client.Repeat(Buffer.concat([Buffer.from([5]), Buffer.from('abc')]),
      new grpc.Metadata(), { deadline: deadline() });
    s.on('data', (d) => out.push(d.toString()));
    s.on('status', (st) => resolve({ out, code: st.code }));
    s.on('error', () => {});
  });
  check('server_streaming', got.code === 0 && got.out.join(',') === 'abc,abc,abc,abc,abc',
    `code ${got.code} got ${got.out.join(',')}`);

  // grpc_send_batch (ABI 1.13): N messages and the status in one call. 64
  // x 16 KiB is 1 MiB, far more than the client's HTTP/2 windows (the
  // default 65,535 bytes per stream and for the connection; a second
  // client announces 4,096 per stream, less than one message): the host
  // must queue what the window cannot take, not drop it, and the trailers
  // must come after the last message.
  const small = new Client(target, creds, { 'grpc-node.flow_control_window': 4096 });
  for (const [c, n, size, status] of [[client, 64, 16384, 0], [small, 64, 16384, 0],
    [client, 5, 16, 9], [client, 0, 16, 0]]) {
    const b = await new Promise((resolve) => {
      const out = [];
      const s = c.Burst(Buffer.from(`${n} ${size} ${status}`), new grpc.Metadata(),
        { deadline: deadline() });
      s.on('data', (d) => out.push(d));
      s.on('status', (st) => resolve({ out, code: st.code, details: st.details }));
      s.on('error', () => {});
    });
    const bad = b.out.findIndex((d, i) => {
      const head = Buffer.from(`${i}:`);
      return d.length !== size || Buffer.compare(d.subarray(0, head.length), head) !== 0 ||
        d.subarray(head.length).some((x) => x !== i % 251);
    });
    check(`send_batch_${n}x${size}_status${status}${c === small ? '_window4096' : ''}`, b.out.length === n && bad === -1 &&
      b.code === status && (status === 0 || b.details === 'burst'),
      `got ${b.out.length} messages, first wrong ${bad}, status ${b.code} '${b.details}'`);
  }
  small.close();

  // bidi: three messages echoed in order, then "bye" after half-close
  const chat = await new Promise((resolve) => {
    const out = [];
    const s = client.Chat(new grpc.Metadata(), { deadline: deadline() });
    s.on('data', (d) => out.push(d.toString()));
    s.on('status', (st) => resolve({ out, code: st.code }));
    s.on('error', () => {});
    s.write(Buffer.from('one'));
    s.write(Buffer.from('two'));
    s.write(Buffer.from('three'));
    s.end();
  });
  check('bidi_streaming', chat.code === 0 && chat.out.join(',') === 'one,two,three,bye',
    `code ${chat.code} got ${chat.out.join(',')}`);

  // a status with a message that needs percent-encoding
  r = await unary('Fail', Buffer.from('bad 100% ü'));
  check('status_message', r.err && r.err.code === grpc.status.INVALID_ARGUMENT &&
    r.err.details === 'bad 100% ü', r.err ? `${r.err.code} ${r.err.details}` : 'no error');

  // a method nobody registered
  r = await unary('Missing', Buffer.from('x'));
  check('unimplemented', r.err && r.err.code === grpc.status.UNIMPLEMENTED &&
    r.err.details === 'Method not found: rmqhost.example.Echo/Missing',
    r.err ? `${r.err.code} ${r.err.details}` : 'no error');

  // invoke_local: echo.so's code 9001 on the remoting server, no socket
  r = await unary('Remote', Buffer.from('9001'));
  check('invoke_local', !r.err && r.res.toString() === '0 ',
    r.err ? r.err.message : `got '${r.res.toString()}'`);
  r = await unary('Remote', Buffer.from('4242'));
  check('invoke_local_unknown_code', !r.err &&
    r.res.toString() === '3  request type 4242 not supported',
    r.err ? r.err.message : `got '${r.res.toString()}'`);

  // many concurrent calls on one connection
  const many = await Promise.all([...Array(50).keys()].map((i) =>
    unary('Say', Buffer.from(`m${i}`)).then((x) => !x.err && x.res.toString() === `m${i}`)));
  check('concurrent_calls', many.every((x) => x), `${many.filter((x) => !x).length} failed`);

  client.close();
  console.log(failures.length ? `RESULT FAIL ${failures.join('; ')}` : 'RESULT ok');
}
// A bidi stream that lives across a hot reload of the plugin: each message
// is dispatched to the generation live when it arrives.
async function acrossReload() {
  const out = [];
  let status = null;
  const s = client.Chat(new grpc.Metadata(), { deadline: Date.now() + 60000 });
  s.on('data', (d) => out.push(d.toString()));
  s.on('status', (st) => { status = st.code; });
  s.on('error', () => {});
  s.write(Buffer.from('before'));
  const hangs = [0, 1, 2].map(() => unary('Hang', Buffer.from('h'), { deadline: Date.now() + 60000 }));
  while (out.length < 1 && status === null) await new Promise((r) => setTimeout(r, 20));
  console.log('OPEN');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  s.write(Buffer.from('after'));
  s.end();
  while (status === null) await new Promise((r) => setTimeout(r, 20));
  check('stream_across_reload', status === 0 && out.join(',') === 'before,after,bye',
    `code ${status} got ${out.join(',')}`);
  const r = await unary('Say', Buffer.from('fresh'));
  check('call_after_reload', !r.err && r.res.toString() === 'fresh', r.err ? r.err.message : 'bad');
  const ended = await Promise.all(hangs);
  check('held_calls_answered_by_quiesce', ended.every((x) => x.err &&
    x.err.code === grpc.status.UNAVAILABLE && x.err.details === 'grpc_echo is reloading'),
    ended.map((x) => (x.err ? `${x.err.code} ${x.err.details}` : 'answered')).join(', '));
  client.close();
  console.log(failures.length ? `RESULT FAIL ${failures.join('; ')}` : 'RESULT ok');
  process.exit(0);
}

// Held calls (grpc_hold, invoke_local_async).
async function held() {
  let r = await unary('Later', Buffer.from('9002'));
  check('later_answered_from_another_thread', !r.err && r.res.toString() === '0 ',
    r.err ? r.err.message : `got '${r.res.toString()}'`);
  r = await unary('Later', Buffer.from('4242'));
  check('later_unknown_code', !r.err && r.res.toString() === '3  request type 4242 not supported',
    r.err ? r.err.message : `got '${r.res.toString()}'`);
  const many = await Promise.all([...Array(20).keys()].map(() =>
    unary('Later', Buffer.from('9002')).then((x) => !x.err && x.res.toString() === '0 ')));
  check('later_concurrent', many.every((x) => x), `${many.filter((x) => !x).length} failed`);
  // cancelled while the answer is on its way: the answer races the cancel
  const raced = await Promise.all([...Array(40).keys()].map((i) => new Promise((resolve) => {
    const c = client.Later(Buffer.from('9002'), new grpc.Metadata(), { deadline: deadline() },
      (err) => resolve(!err || err.code === grpc.status.CANCELLED));
    setTimeout(() => c.cancel(), (i * 7) % 150);
  })));
  check('later_cancel_race', raced.every((x) => x), 'a call ended otherwise than OK/CANCELLED');
  // Hang: 30 held, 15 cancelled by the client, 15 left to the connection's end
  const ends = [];
  const calls = [...Array(30).keys()].map(() => client.Hang(Buffer.from('h'), new grpc.Metadata(),
    { deadline: Date.now() + 120000 }, (err) => ends.push(err ? err.code : 0)));
  await new Promise((r) => setTimeout(r, 300));
  calls.slice(0, 15).forEach((c) => c.cancel());
  while (ends.length < 15) await new Promise((r) => setTimeout(r, 20));
  check('hang_cancelled', ends.every((c) => c === grpc.status.CANCELLED), ends.join(','));
  // 5 more with a 1.5 s deadline: ended by the client's RST_STREAM or by the
  // server's DEADLINE_EXCEEDED, whichever comes first
  const late = await Promise.all([...Array(5).keys()].map(() => unary('Hang', Buffer.from('h'),
    { deadline: Date.now() + 1500 })));
  check('hang_deadline', late.every((x) => x.err && x.err.code === grpc.status.DEADLINE_EXCEEDED),
    late.map((x) => (x.err ? x.err.code : 'answered')).join(','));
  // a client that does not enforce its deadline itself (node's http2, a
  // bare gRPC request with grpc-timeout 1 s): the server ends the held call
  // DEADLINE_EXCEEDED on its own
  const trailers = await new Promise((resolve) => {
    const http2 = require('http2');
    const session = http2.connect(`http://${target}`);
    session.on('error', (e) => resolve({ error: String(e) }));
    const req = session.request({ ':method': 'POST', ':path': '/rmqhost.example.Echo/Hang',
      'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': '1000m' });
    // a call that sent nothing ends with trailers only: they come as the
    // response's headers
    const done = (t) => { if (t['grpc-status'] !== undefined) { resolve(t); session.close(); } };
    req.on('response', done);
    req.on('trailers', done);
    req.on('close', () => resolve({ closed: 'without a grpc-status' }));
    req.on('error', (e) => resolve({ error: String(e) }));
    req.end(Buffer.from([0, 0, 0, 0, 1, 0x68]));
  });
  check('hang_server_deadline', trailers['grpc-status'] === '4' &&
    trailers['grpc-message'] === 'deadline exceeded', JSON.stringify(trailers));
  console.log(failures.length ? `RESULT FAIL ${failures.join('; ')}` : 'RESULT HUNG');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  process.exit(0); // the 15 other Hang calls end with the connection
}

(mode === 'reload' ? acrossReload() : mode === 'hold' ? held() : main())
  .catch((e) => { console.log(`RESULT FAIL exception ${e.stack}`); });
