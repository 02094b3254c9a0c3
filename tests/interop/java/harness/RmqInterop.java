// The Java side of the interop tests: one JVM runs the scenarios named on
// its command line in sequence against one NameServer, each on its own
// topic and groups, prints "PASS name" or "FAIL name: why" per scenario and
// exits 1 if any failed. It is compiled once per client version (4.9.8 and
// the 5.x remoting client 5.3.3) from this one source: it uses only the API
// both share.
//
//   java RmqInterop NAMESRV RUN_ID SCENARIO[:ARG...]...
//
// Client scenarios: basic tag sql retry dlq delay timer (5.x) orderly transaction
// request (callback form) request-sync batch. Store/cluster scenarios
// (tests/interop/java/store_cluster.sh), message i of a topic being body
// storeBody(i), key skey-TOPIC-i, tag Tag<i%2>, property idx=i:
//   produce:TOPIC:BROKER:FROM:TO[:IDS]  sends messages FROM..TO-1 to BROKER's
//                                  queues, each SEND_OK; IDS: a file where
//                                  "i msgId" of each send is written
//   consume:TOPIC:GROUP:FROM:TO[:IDS]   GROUP gets exactly messages FROM..TO-1,
//                                  intact, each once; IDS: each one's msgId is
//                                  the one its send was answered with
//   query:TOPIC:FROM:TO            queryMessage by key finds each of them once
//   spread:TOPIC:N:BROKER,BROKER.. N sends spread over the brokers' queues; a
//                                  group of two consumers gets exactly N, from
//                                  each broker as many as were sent to it
//   failover:TOPIC:BROKER:N:DIR    (tests/interop/java/ha_pair.sh) sends 0..N-1
//                                  to BROKER, each SEND_OK; writes DIR/ids
//                                  (as produce's IDS), creates DIR/sent,
//                                  waits for DIR/promoted (master killed, its
//                                  slave promoted), then the same producer's
//                                  sends N..N+9 are SEND_OK on BROKER again
//                                  once its route names the promoted broker
//   loadproduce:TOPIC:DIR          (ha_failover_under_load.sh) sends message
//                                  i = 0, 1, .. one every ~5 ms with the
//                                  client's own retries until DIR/stop exists,
//                                  appending "i msgId" of each SEND_OK to
//                                  DIR/acked (flushed per line); other answers
//                                  and exceptions are counted, not fatal
//   loadconsume:TOPIC:GROUP:DIR:EXPECTED  a push consumer of GROUP, started at
//                                  once, appends each msgId it gets to
//                                  DIR/GROUP.recv; once file EXPECTED ("i msgId"
//                                  lines) exists it waits until every msgId
//                                  listed there arrived (at least once; it
//                                  reports duplicates and unacknowledged ones)
//   cbodies:TOPIC:GROUP:FILE       (tests/interop/store_ha) GROUP gets exactly
//                                  once each message the C test client sent,
//                                  message i being cBody(i), for each i listed
//                                  in FILE (one a line), and nothing else
// RUN_ID makes topics and groups unique per run (client scenarios).
// The scenarios need the broker's messageDelayLevel to start "1s 2s 1s"
// (retries wait level 3) and transactionCheckInterval/transactionTimeOut of
// about a second: the test scripts configure the daemon so.

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.consumer.store.OffsetStore;
import org.apache.rocketmq.client.consumer.store.ReadOffsetType;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.RequestCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.client.utils.MessageUtil;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

public final class RmqInterop {
  /** A scenario's failure: its message is the FAIL line's reason. */
  static final class Fail extends RuntimeException {
    Fail(String why) {
      super(why);
    }
  }

  static final long WAIT_MS = 40_000; // bound on waiting for deliveries
  static final long QUIET_MS = 1_500; // after the last expected one: nothing more may come

  final String namesrv;
  final String run;
  final List<Object> started = new ArrayList<>();

  RmqInterop(String namesrv, String run) {
    this.namesrv = namesrv;
    this.run = run;
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: RmqInterop NAMESRV RUN_ID SCENARIO[:ARG...]...");
      System.exit(2);
    }
    // A fresh group's %RETRY% topic is created by its first heartbeat, after
    // the client looked its route up: the client learns it at its next route
    // poll and uses it at its next rebalance (30 s and 20 s by default, the
    // same against a Java broker). Both once a second keep the test short.
    System.setProperty("rocketmq.client.rebalance.waitInterval", "1000");
    // Sends go to the broker's VIP port (listen port - 2), as with older 4.x
    // clients' default; 4.9.8 and 5.3.3 default to the listen port.
    System.setProperty("com.rocketmq.sendMessageWithVIPChannel", "true");
    int failed = 0;
    for (int i = 2; i < args.length; i++) {
      RmqInterop h = new RmqInterop(args[0], args[1]);
      String[] sc = args[i].split(":");
      long t0 = System.nanoTime();
      try {
        h.dispatch(sc);
        System.out.printf("PASS %s (%d ms)%n", args[i], (System.nanoTime() - t0) / 1_000_000);
      } catch (Throwable e) {
        failed++;
        String why = e instanceof Fail ? e.getMessage() : e.toString();
        System.out.printf("FAIL %s: %s%n", args[i], why);
        if (!(e instanceof Fail)) e.printStackTrace(System.out);
      } finally {
        h.shutdownAll();
      }
      System.out.flush();
    }
    System.out.printf("%d of %d scenarios failed%n", failed, args.length - 2);
    System.exit(failed == 0 ? 0 : 1);
  }

  void dispatch(String[] sc) throws Exception {
    switch (sc[0]) {
      case "basic": basic(); break;
      case "tag": tag(); break;
      case "sql": sql(); break;
      case "retry": retry(); break;
      case "dlq": dlq(); break;
      case "delay": delay(); break;
      case "timer": timer(); break;
      case "orderly": orderly(); break;
      case "transaction": transaction(); break;
      case "request": request(false); break;
      case "request-sync": request(true); break;
      case "batch": batch(); break;
      case "produce":
        produce(sc[1], sc[2], Integer.parseInt(sc[3]), Integer.parseInt(sc[4]), sc.length > 5 ? sc[5] : null);
        break;
      case "consume":
        consume(sc[1], sc[2], Integer.parseInt(sc[3]), Integer.parseInt(sc[4]), sc.length > 5 ? sc[5] : null);
        break;
      case "query": query(sc[1], Integer.parseInt(sc[2]), Integer.parseInt(sc[3])); break;
      case "spread": spread(sc[1], Integer.parseInt(sc[2]), sc[3].split(",")); break;
      case "cbodies": cbodies(sc[1], sc[2], sc[3]); break;
      case "loadproduce": loadProduce(sc[1], sc[2]); break;
      case "loadconsume": loadConsume(sc[1], sc[2], sc[3], sc[4]); break;
      case "failover": failover(sc[1], sc[2], Integer.parseInt(sc[3]), sc[4]); break;
      default: throw new Fail("unknown scenario " + sc[0]);
    }
  }

  // ---- clients ------------------------------------------------------------

  String name(String what) {
    return "J" + what + "_" + run;
  }

  DefaultMQProducer producer(String group) throws Exception {
    DefaultMQProducer p = new DefaultMQProducer(group);
    p.setNamesrvAddr(namesrv);
    p.setSendMsgTimeout(10_000);
    p.setPollNameServerInterval(1000);
    p.start();
    started.add(p);
    return p;
  }

  DefaultMQPushConsumer consumer(String group) {
    DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
    c.setNamesrvAddr(namesrv);
    c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    c.setPollNameServerInterval(1000);
    c.setPullInterval(0);
    c.setConsumeThreadMin(2);
    c.setConsumeThreadMax(4);
    started.add(c);
    return c;
  }

  void shutdownAll() {
    Collections.reverse(started);
    for (Object o : started) {
      try {
        if (o instanceof DefaultMQPushConsumer) ((DefaultMQPushConsumer) o).shutdown();
        else ((DefaultMQProducer) o).shutdown();
      } catch (Throwable ignored) {
        // the next scenario is independent of a client that failed to stop
      }
    }
    started.clear();
  }

  /** The first send auto-creates the topic; the route may take a moment. */
  static SendResult send(DefaultMQProducer p, Message m) throws Exception {
    return send(p, m, null);
  }

  /** To queue mq (null: the producer's choice), retried while routes settle. */
  static SendResult send(DefaultMQProducer p, Message m, MessageQueue mq) throws Exception {
    long end = System.currentTimeMillis() + 20_000;
    while (true) {
      try {
        SendResult r = mq == null ? p.send(m) : p.send(m, mq, 10_000);
        if (r.getSendStatus() != SendStatus.SEND_OK) throw new Fail("send status " + r.getSendStatus());
        return r;
      } catch (Fail f) {
        throw f;
      } catch (Exception e) {
        if (System.currentTimeMillis() > end) throw e;
        Thread.sleep(300);
      }
    }
  }

  static void await(String what, BooleanSupplier done) throws InterruptedException {
    long end = System.currentTimeMillis() + WAIT_MS;
    while (!done.getAsBoolean()) {
      if (System.currentTimeMillis() > end) throw new Fail("timed out waiting for " + what);
      Thread.sleep(50);
    }
  }

  static final boolean TRACE = Boolean.getBoolean("rmq.interop.trace");

  static void trace(String what) {
    if (TRACE) System.out.printf("  %tT.%<tL %s%n", System.currentTimeMillis(), what);
  }

  static void check(boolean ok, String why) {
    if (!ok) throw new Fail(why);
  }

  static String body(MessageExt m) {
    return new String(m.getBody(), StandardCharsets.UTF_8);
  }

  static Message msg(String topic, String tag, String key, String body) {
    Message m = new Message(topic, tag, key, body.getBytes(StandardCharsets.UTF_8));
    return m;
  }

  /** Collects deliveries per body; exactly-once is checked on it. */
  static final class Received {
    final Map<String, MessageExt> byBody = new ConcurrentHashMap<>();
    final List<String> duplicates = new CopyOnWriteArrayList<>();
    final AtomicInteger total = new AtomicInteger();

    void add(MessageExt m) {
      total.incrementAndGet();
      if (byBody.putIfAbsent(body(m), m) != null) duplicates.add(body(m));
    }

    /** Waits for the expected bodies, then a quiet period: nothing else may come. */
    void expectExactly(Set<String> bodies) throws InterruptedException {
      try {
        await(bodies.size() + " messages", () -> byBody.keySet().containsAll(bodies));
      } catch (Fail f) { // how many came when it gave up
        Set<String> missing = new HashSet<>(bodies);
        missing.removeAll(byBody.keySet());
        throw new Fail(f.getMessage() + " (got " + byBody.size() + ", " + missing.size() + " missing)");
      }
      Thread.sleep(QUIET_MS);
      check(duplicates.isEmpty(), "delivered twice: " + duplicates);
      Set<String> extra = new HashSet<>(byBody.keySet());
      extra.removeAll(bodies);
      check(extra.isEmpty(), "unexpected messages: " + extra);
      check(total.get() == bodies.size(), "deliveries " + total.get() + " != " + bodies.size());
    }
  }

  DefaultMQPushConsumer concurrentConsumer(String group, String topic, Object selector, Received into)
      throws Exception {
    DefaultMQPushConsumer c = consumer(group);
    if (selector instanceof MessageSelector) c.subscribe(topic, (MessageSelector) selector);
    else c.subscribe(topic, (String) selector);
    c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
      msgs.forEach(into::add);
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    c.start();
    return c;
  }

  // ---- client scenarios ---------------------------------------------------

  /** N messages with body, key, tag and user properties arrive exactly once, intact. */
  void basic() throws Exception {
    String topic = name("Basic");
    DefaultMQProducer p = producer(name("basic_pg"));
    int n = 30;
    Set<String> bodies = new HashSet<>();
    for (int i = 0; i < n; i++) {
      Message m = msg(topic, "Tag" + (i % 3), "key-" + i, "basic-" + i);
      m.putUserProperty("idx", Integer.toString(i));
      m.putUserProperty("color", i % 2 == 0 ? "red" : "blue");
      send(p, m);
      bodies.add("basic-" + i);
    }
    Received got = new Received();
    concurrentConsumer(name("basic_cg"), topic, "*", got);
    got.expectExactly(bodies);
    for (MessageExt m : got.byBody.values()) {
      int i = Integer.parseInt(body(m).substring("basic-".length()));
      check(("key-" + i).equals(m.getKeys()), "keys of " + i + ": " + m.getKeys());
      check(("Tag" + (i % 3)).equals(m.getTags()), "tag of " + i + ": " + m.getTags());
      check(Integer.toString(i).equals(m.getUserProperty("idx")), "idx of " + i);
      check((i % 2 == 0 ? "red" : "blue").equals(m.getUserProperty("color")), "color of " + i);
      check(m.getReconsumeTimes() == 0, "reconsumeTimes of " + i + ": " + m.getReconsumeTimes());
      check(m.getTopic().equals(topic), "topic of " + i + ": " + m.getTopic());
    }
  }

  /** A TAG subscription "TagA || TagC" gets exactly those tags. */
  void tag() throws Exception {
    String topic = name("Tag");
    DefaultMQProducer p = producer(name("tag_pg"));
    Set<String> want = new HashSet<>();
    String[] tags = {"TagA", "TagB", "TagC", "TagD"};
    for (int i = 0; i < 24; i++) {
      String t = tags[i % 4];
      send(p, msg(topic, t, "k" + i, t + "-" + i));
      if (t.equals("TagA") || t.equals("TagC")) want.add(t + "-" + i);
    }
    Received got = new Received();
    concurrentConsumer(name("tag_cg"), topic, "TagA || TagC", got);
    got.expectExactly(want);
  }

  /** An SQL92 subscription filters on user properties and TAGS. */
  void sql() throws Exception {
    String topic = name("Sql");
    DefaultMQProducer p = producer(name("sql_pg"));
    Set<String> want = new HashSet<>();
    for (int i = 0; i < 30; i++) {
      String tag = i % 2 == 0 ? "even" : "odd";
      Message m = msg(topic, tag, "k" + i, "sql-" + i);
      m.putUserProperty("a", Integer.toString(i));
      if (i % 5 != 0) m.putUserProperty("region", "eu");
      send(p, m);
      if (i > 10 && tag.equals("even") && i % 5 != 0) want.add("sql-" + i);
    }
    Received got = new Received();
    concurrentConsumer(name("sql_cg"), topic,
        MessageSelector.bySql("a > 10 AND TAGS = 'even' AND region IS NOT NULL AND region = 'eu'"), got);
    got.expectExactly(want);
  }

  /** RECONSUME_LATER once: the message comes back once with reconsumeTimes 1, intact. */
  void retry() throws Exception {
    String topic = name("Retry");
    DefaultMQProducer p = producer(name("retry_pg"));
    Message m = msg(topic, "T", "retry-key", "retry-body");
    m.putUserProperty("u", "v");
    send(p, m);
    List<MessageExt> seen = new CopyOnWriteArrayList<>();
    DefaultMQPushConsumer c = consumer(name("retry_cg"));
    c.subscribe(topic, "*");
    c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
      seen.addAll(msgs);
      return seen.size() == 1 ? ConsumeConcurrentlyStatus.RECONSUME_LATER : ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    c.start();
    await("the retried delivery", () -> seen.size() >= 2);
    Thread.sleep(QUIET_MS + 1000); // a third delivery would follow the 1 s retry level
    check(seen.size() == 2, "deliveries: " + seen.size());
    MessageExt again = seen.get(1);
    check(again.getReconsumeTimes() == 1, "reconsumeTimes " + again.getReconsumeTimes());
    check(body(again).equals("retry-body") && "retry-key".equals(again.getKeys())
        && "v".equals(again.getUserProperty("u")) && again.getTopic().equals(topic),
        "retried message differs: " + again);
    check(seen.get(0).getMsgId().equals(again.getMsgId()), "msgId changed across the retry");
  }

  /** maxReconsumeTimes 1, always failing: two deliveries, then %DLQ%group holds it. */
  void dlq() throws Exception {
    String topic = name("Dlq");
    String group = name("dlq_cg");
    DefaultMQProducer p = producer(name("dlq_pg"));
    send(p, msg(topic, "T", "dlq-key-" + run, "dlq-body"));
    AtomicInteger deliveries = new AtomicInteger();
    DefaultMQPushConsumer c = consumer(group);
    c.setMaxReconsumeTimes(1);
    c.subscribe(topic, "*");
    c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
      deliveries.addAndGet(msgs.size());
      return ConsumeConcurrentlyStatus.RECONSUME_LATER;
    });
    c.start();
    String dlq = "%DLQ%" + group;
    long begin = System.currentTimeMillis() - 3_600_000;
    List<MessageExt> found = new ArrayList<>();
    trace("dlq: consumer started");
    await("the message in " + dlq, () -> {
      try {
        QueryResult r = p.queryMessage(dlq, "dlq-key-" + run, 32, begin, System.currentTimeMillis() + 60_000);
        found.clear();
        found.addAll(r.getMessageList());
        return !found.isEmpty();
      } catch (Exception e) {
        trace("dlq: " + e.getMessage() + " deliveries " + deliveries.get());
        return false; // no DLQ topic yet
      }
    });
    Thread.sleep(QUIET_MS);
    check(deliveries.get() == 2, "deliveries before the DLQ: " + deliveries.get());
    check(found.size() == 1, "DLQ copies: " + found.size());
    MessageExt d = found.get(0);
    check(body(d).equals("dlq-body"), "DLQ body: " + body(d));
    check(topic.equals(d.getProperty("RETRY_TOPIC")), "RETRY_TOPIC: " + d.getProperty("RETRY_TOPIC"));
  }

  /** Delay level 2 (2 s here): not delivered before it, delivered once after with its topic. */
  void delay() throws Exception {
    String topic = name("Delay");
    DefaultMQProducer p = producer(name("delay_pg"));
    send(p, msg(topic, "warmup", null, "warmup")); // the topic exists before the consumer starts
    Received got = new Received();
    concurrentConsumer(name("delay_cg"), topic, "*", got);
    await("the warmup message", () -> got.byBody.containsKey("warmup"));
    Message m = msg(topic, "T", "delay-key", "delay-body");
    m.setDelayTimeLevel(2);
    long sentAt = System.currentTimeMillis();
    send(p, m);
    got.expectExactly(Set.of("warmup", "delay-body"));
    MessageExt d = got.byBody.get("delay-body");
    check(d.getStoreTimestamp() - d.getBornTimestamp() >= 1_900,
        "delivered " + (d.getStoreTimestamp() - d.getBornTimestamp()) + " ms after birth, level 2 is 2 s");
    check("2".equals(d.getProperty("DELAY")), "DELAY property: " + d.getProperty("DELAY"));
    check(topic.equals(d.getTopic()) && "delay-key".equals(d.getKeys()), "delayed message differs: " + d);
    check(System.currentTimeMillis() - sentAt >= 1_900, "delivered too early");
  }

  /**
   * 5.x timer messages (5.x client only; called by reflection so the source
   * compiles against 4.9.8 too): setDelayTimeSec(2) and setDeliverTimeMs(now
   * + 3 s) are not delivered before their time (TIMER_OUT_MS, Java's rounding
   * down to 1 s), then once each to their topic with TIMER_OUT_MS /
   * TIMER_DEQUEUE_MS and without REAL_TOPIC; a delay beyond 3 days is refused
   * with MESSAGE_ILLEGAL (13).
   */
  void timer() throws Exception {
    String topic = name("Timer");
    DefaultMQProducer p = producer(name("timer_pg"));
    send(p, msg(topic, "warmup", null, "warmup"));
    Received got = new Received();
    concurrentConsumer(name("timer_cg"), topic, "*", got);
    await("the warmup message", () -> got.byBody.containsKey("warmup"));
    Message bySec = msg(topic, "T", "timer-sec", "timer-sec-body");
    Message.class.getMethod("setDelayTimeSec", long.class).invoke(bySec, 2L);
    Message byMs = msg(topic, "T", "timer-ms", "timer-ms-body");
    long at = System.currentTimeMillis() + 3_000;
    Message.class.getMethod("setDeliverTimeMs", long.class).invoke(byMs, at);
    long sentAt = System.currentTimeMillis();
    send(p, bySec);
    send(p, byMs);
    got.expectExactly(Set.of("warmup", "timer-sec-body", "timer-ms-body"));
    for (String b : List.of("timer-sec-body", "timer-ms-body")) {
      MessageExt d = got.byBody.get(b);
      check(topic.equals(d.getTopic()), b + " topic: " + d.getTopic());
      check(d.getProperty("REAL_TOPIC") == null, b + " keeps REAL_TOPIC");
      long out = Long.parseLong(d.getProperty("TIMER_OUT_MS"));
      long deq = Long.parseLong(d.getProperty("TIMER_DEQUEUE_MS"));
      check(deq >= out, b + " delivered before TIMER_OUT_MS: " + deq + " < " + out);
      check(d.getStoreTimestamp() >= out, b + " stored before its time");
    }
    long outMs = Long.parseLong(got.byBody.get("timer-ms-body").getProperty("TIMER_OUT_MS"));
    check(outMs == (at % 1000 == 0 ? at - 1000 : at / 1000 * 1000), "TIMER_OUT_MS " + outMs + " for " + at);
    check(System.currentTimeMillis() - sentAt >= 1_000, "delivered too early");
    Message tooLate = msg(topic, "T", "timer-late", "timer-late-body");
    Message.class.getMethod("setDelayTimeSec", long.class).invoke(tooLate, 4L * 24 * 3600);
    try {
      p.send(tooLate);
      throw new IllegalStateException("a 4-day timer was accepted");
    } catch (org.apache.rocketmq.client.exception.MQBrokerException e) {
      check(e.getResponseCode() == 13, "4-day timer answered " + e.getResponseCode() + " " + e.getErrorMessage());
    }
  }

  /** Orders routed by id to one queue each; MessageListenerOrderly sees each order's steps in order. */
  void orderly() throws Exception {
    String topic = name("Orderly");
    DefaultMQProducer p = producer(name("orderly_pg"));
    int orders = 6, steps = 12;
    send(p, msg(topic, "warmup", null, "warmup")); // creates the topic: the selector needs its queues
    for (int s = 0; s < steps; s++) {
      for (int o = 0; o < orders; o++) {
        Message m = msg(topic, "O", "order-" + o, "order-" + o + "-step-" + s);
        SendResult r = p.send(m, (mqs, msg, arg) -> mqs.get((Integer) arg % mqs.size()), o, 10_000);
        check(r.getSendStatus() == SendStatus.SEND_OK, "send status " + r.getSendStatus());
      }
    }
    Map<String, List<Integer>> perOrder = new ConcurrentHashMap<>();
    Map<String, Set<Integer>> queuesPerOrder = new ConcurrentHashMap<>();
    AtomicInteger total = new AtomicInteger();
    DefaultMQPushConsumer c = consumer(name("orderly_cg"));
    c.subscribe(topic, "O");
    c.registerMessageListener((MessageListenerOrderly) (msgs, ctx) -> {
      for (MessageExt m : msgs) {
        String[] parts = body(m).split("-step-");
        perOrder.computeIfAbsent(parts[0], k -> new CopyOnWriteArrayList<>()).add(Integer.parseInt(parts[1]));
        queuesPerOrder.computeIfAbsent(parts[0], k -> ConcurrentHashMap.newKeySet()).add(m.getQueueId());
        total.incrementAndGet();
      }
      return ConsumeOrderlyStatus.SUCCESS;
    });
    c.start();
    await(orders * steps + " ordered messages (have " + total.get() + ")", () -> total.get() >= orders * steps);
    Thread.sleep(QUIET_MS);
    check(total.get() == orders * steps, "deliveries " + total.get());
    for (int o = 0; o < orders; o++) {
      List<Integer> seen = perOrder.get("order-" + o);
      List<Integer> want = new ArrayList<>();
      for (int s = 0; s < steps; s++) want.add(s);
      check(want.equals(seen), "order-" + o + " steps arrived as " + seen);
      check(queuesPerOrder.get("order-" + o).size() == 1, "order-" + o + " spread over queues");
    }
  }

  /** Commit and rollback from the local transaction; UNKNOW resolved COMMIT by the check-back. */
  void transaction() throws Exception {
    String topic = name("Tx");
    Set<String> checked = ConcurrentHashMap.newKeySet();
    TransactionMQProducer p = new TransactionMQProducer(name("tx_pg"));
    p.setNamesrvAddr(namesrv);
    p.setSendMsgTimeout(10_000);
    p.setPollNameServerInterval(1000);
    p.setTransactionListener(new TransactionListener() {
      @Override
      public LocalTransactionState executeLocalTransaction(Message m, Object arg) {
        String b = new String(m.getBody(), StandardCharsets.UTF_8);
        if (b.startsWith("commit")) return LocalTransactionState.COMMIT_MESSAGE;
        if (b.startsWith("rollback")) return LocalTransactionState.ROLLBACK_MESSAGE;
        return LocalTransactionState.UNKNOW;
      }

      @Override
      public LocalTransactionState checkLocalTransaction(MessageExt m) {
        String b = new String(m.getBody(), StandardCharsets.UTF_8);
        checked.add(b);
        // the check answers for the UNKNOW ones: commit "checkc", roll back "checkr"
        return b.startsWith("checkc") ? LocalTransactionState.COMMIT_MESSAGE : LocalTransactionState.ROLLBACK_MESSAGE;
      }
    });
    p.start();
    started.add(p);
    send(p, msg(topic, "warmup", null, "warmup")); // a plain send creates the topic
    Received got = new Received();
    concurrentConsumer(name("tx_cg"), topic, "*", got);
    Set<String> want = new HashSet<>(Set.of("warmup"));
    for (String kind : new String[] {"commit", "rollback", "checkc", "checkr"}) {
      for (int i = 0; i < 3; i++) {
        TransactionSendResult r = p.sendMessageInTransaction(msg(topic, "TX", kind + i, kind + "-" + i), null);
        check(r.getSendStatus() == SendStatus.SEND_OK, "half send " + r.getSendStatus());
        if (kind.equals("commit") || kind.equals("checkc")) want.add(kind + "-" + i);
      }
    }
    got.expectExactly(want);
    await("check-backs of the UNKNOW ones", () -> checked.size() >= 6);
    for (int i = 0; i < 3; i++) {
      check(checked.contains("checkc-" + i) && checked.contains("checkr-" + i), "not checked: " + checked);
    }
    Set<String> resolvedEarly = new HashSet<>(checked);
    resolvedEarly.removeIf(b -> b.startsWith("check"));
    check(resolvedEarly.isEmpty(), "checked though resolved by the local transaction: " + resolvedEarly);
    MessageExt c0 = got.byBody.get("commit-0");
    check("commit0".equals(c0.getKeys()), "committed message keys: " + c0.getKeys());
  }

  /**
   * Request/reply: a responder consumer answers each request with
   * MessageUtil.createReplyMessage; the broker pushes the reply to the
   * requester. sync: request(msg, timeout), else request(msg, callback,
   * timeout). (The 5.3.3 client's synchronous request() is broken: it returns
   * as soon as the request is sent, reporting a reply timeout,
   * apache/rocketmq#9292, against a Java broker as well; the suite runs only
   * the callback form with it.)
   */
  void request(boolean sync) throws Exception {
    String topic = name(sync ? "ReqSync" : "Req");
    DefaultMQProducer requester = producer(name(sync ? "reqs_pg" : "req_pg"));
    DefaultMQProducer responder = producer(name(sync ? "resps_pg" : "resp_pg"));
    // The responder creates the topic. The requester must not send first: a
    // request() to a topic whose route it lacks looks the route up and sends
    // its heartbeat at once, which is how the broker learns the requester's
    // connection for the reply; after an earlier send it would wait for the
    // 30 s heartbeat (4.9.8 and 5.3.3 clients alike; a Java 4.9.7 broker
    // then answers "channel of <clientId> not found" just as rmqhost does).
    send(responder, msg(topic, "warmup", null, "warmup"));
    DefaultMQPushConsumer c = consumer(name(sync ? "reqs_cg" : "req_cg"));
    c.subscribe(topic, "REQ");
    List<String> replyErrors = new CopyOnWriteArrayList<>();
    c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
      for (MessageExt m : msgs) {
        try {
          Message reply = MessageUtil.createReplyMessage(m, ("reply-to-" + body(m)).getBytes(StandardCharsets.UTF_8));
          responder.send(reply, 10_000);
        } catch (Exception e) {
          replyErrors.add(e.toString() + (e.getCause() != null ? " caused by " + e.getCause() : ""));
        }
      }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    c.start();
    for (int i = 0; i < 3; i++) {
      Message req = msg(topic, "REQ", "req-" + i, "question-" + i);
      Message reply;
      try {
        if (sync) {
          reply = requester.request(req, 20_000);
        } else {
          CompletableFuture<Message> f = new CompletableFuture<>();
          requester.request(req, new RequestCallback() {
            @Override
            public void onSuccess(Message m) {
              // 4.9.8 and 5.3.3 call it once with null when the request is
              // sent (apache/rocketmq PR #4313), then with the reply
              if (m != null) f.complete(m);
            }

            @Override
            public void onException(Throwable e) {
              f.completeExceptionally(e);
            }
          }, 20_000);
          reply = f.get(25, TimeUnit.SECONDS);
        }
      } catch (Exception e) {
        throw new Fail("request(question-" + i + "): " + e + (replyErrors.isEmpty() ? "" : "; responder: " + replyErrors));
      }
      check(reply != null, "no reply to question-" + i);
      String rb = new String(reply.getBody(), StandardCharsets.UTF_8);
      check(rb.equals("reply-to-question-" + i), "reply body " + rb);
      check(req.getProperty("CORRELATION_ID").equals(reply.getProperty("CORRELATION_ID")), "CORRELATION_ID differs");
    }
    check(replyErrors.isEmpty(), "responder: " + replyErrors);
  }

  /** One batch send of 16 messages: all arrive once, with their keys, at consecutive offsets. */
  void batch() throws Exception {
    String topic = name("Batch");
    DefaultMQProducer p = producer(name("batch_pg"));
    send(p, msg(topic, "warmup", null, "warmup"));
    List<Message> batch = new ArrayList<>();
    Set<String> want = new HashSet<>(Set.of("warmup"));
    for (int i = 0; i < 16; i++) {
      Message m = msg(topic, "B", "batch-key-" + i, "batch-" + i);
      m.putUserProperty("i", Integer.toString(i));
      batch.add(m);
      want.add("batch-" + i);
    }
    SendResult r = p.send(batch);
    check(r.getSendStatus() == SendStatus.SEND_OK, "batch send " + r.getSendStatus());
    check(r.getMsgId().split(",").length == 16, "batch msgIds: " + r.getMsgId());
    Received got = new Received();
    concurrentConsumer(name("batch_cg"), topic, "*", got);
    got.expectExactly(want);
    Set<Long> offsets = new HashSet<>();
    for (int i = 0; i < 16; i++) {
      MessageExt m = got.byBody.get("batch-" + i);
      check(("batch-key-" + i).equals(m.getKeys()) && Integer.toString(i).equals(m.getUserProperty("i")),
          "batch message " + i + " differs: " + m);
      check(m.getQueueId() == r.getMessageQueue().getQueueId(), "batch message " + i + " in another queue");
      offsets.add(m.getQueueOffset());
    }
    long first = r.getQueueOffset();
    for (long o = first; o < first + 16; o++) check(offsets.contains(o), "no batch message at offset " + o);
  }

  // ---- store and cluster scenarios -----------------------------------------

  static String storeBody(int i) {
    return "stored-" + i + "-" + "x".repeat(i % 50);
  }

  /** Sent straight to BROKER's queues: a topic that does not exist yet is created there only. */
  void produce(String topic, String broker, int from, int to, String ids) throws Exception {
    DefaultMQProducer p = producer(topic + "_pg");
    StringBuilder sent = new StringBuilder();
    for (int i = from; i < to; i++) {
      Message m = msg(topic, "Tag" + (i % 2), "skey-" + topic + "-" + i, storeBody(i));
      m.putUserProperty("idx", Integer.toString(i));
      sent.append(i).append(' ').append(send(p, m, new MessageQueue(topic, broker, i % 4)).getMsgId()).append('\n');
    }
    if (ids != null) writeIds(ids, sent);
  }

  /** Written whole, then renamed: a reader never sees half a file. */
  static void writeIds(String path, CharSequence lines) throws Exception {
    java.nio.file.Path to = java.nio.file.Paths.get(path), tmp = java.nio.file.Paths.get(path + ".tmp");
    java.nio.file.Files.writeString(tmp, lines);
    java.nio.file.Files.move(tmp, to, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  /** "i msgId" lines of writeIds. */
  static Map<Integer, String> readIds(String path) throws Exception {
    Map<Integer, String> ids = new HashMap<>();
    for (String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get(path))) {
      String[] f = line.trim().split(" ");
      if (f.length == 2) ids.put(Integer.parseInt(f[0]), f[1]);
    }
    return ids;
  }

  void failover(String topic, String broker, int n, String dir) throws Exception {
    DefaultMQProducer p = producer(topic + "_pg");
    StringBuilder sent = new StringBuilder();
    for (int i = 0; i < n; i++)
      sent.append(i).append(' ').append(send(p, storeMsg(topic, i), new MessageQueue(topic, broker, i % 4)).getMsgId())
          .append('\n');
    writeIds(dir + "/ids", sent);
    java.nio.file.Files.createFile(java.nio.file.Paths.get(dir, "sent"));
    long end = System.currentTimeMillis() + 300_000;
    while (!java.nio.file.Files.exists(java.nio.file.Paths.get(dir, "promoted"))) {
      if (System.currentTimeMillis() > end) throw new Fail("no promotion within 300 s");
      Thread.sleep(100);
    }
    // sends fail while the route names the dead master (or no master); the
    // producer polls the NameServer every second
    end = System.currentTimeMillis() + 60_000;
    SendResult r = null;
    while (r == null) {
      try {
        r = p.send(storeMsg(topic, n), new MessageQueue(topic, broker, n % 4), 3_000);
      } catch (Exception e) {
        if (System.currentTimeMillis() > end) throw new Fail("no send accepted 60 s after the promotion: " + e);
        Thread.sleep(300);
      }
    }
    check(r.getSendStatus() == SendStatus.SEND_OK, "first send after the promotion: " + r.getSendStatus());
    check(broker.equals(r.getMessageQueue().getBrokerName()), "sent to " + r.getMessageQueue());
    for (int i = n + 1; i < n + 10; i++) {
      SendResult k = p.send(storeMsg(topic, i), new MessageQueue(topic, broker, i % 4), 10_000);
      check(k.getSendStatus() == SendStatus.SEND_OK, "send " + i + " after the promotion: " + k.getSendStatus());
    }
    java.nio.file.Files.createFile(java.nio.file.Paths.get(dir, "resent"));
  }

  /** Sends until DIR/stop exists; each SEND_OK's "i msgId" goes to DIR/acked at once. */
  void loadProduce(String topic, String dir) throws Exception {
    DefaultMQProducer p = producer(topic + "_pg");
    p.setSendMsgTimeout(3_000); // a dead broker costs 3 s per attempt, not 10
    java.nio.file.Path stop = java.nio.file.Paths.get(dir, "stop");
    Map<String, Integer> other = new java.util.TreeMap<>();
    int i = 0, ok = 0;
    String last = "";
    try (java.io.BufferedWriter acked = java.nio.file.Files.newBufferedWriter(java.nio.file.Paths.get(dir, "acked"))) {
      for (; !java.nio.file.Files.exists(stop); i++) {
        String what, why = null;
        try {
          SendResult r = p.send(storeMsg(topic, i)); // the client retries twice on another attempt
          if (r.getSendStatus() == SendStatus.SEND_OK) {
            acked.write(i + " " + r.getMsgId() + "\n");
            acked.flush();
            ok++;
            what = null;
          } else {
            what = r.getSendStatus().toString();
          }
        } catch (Exception e) {
          String m = String.valueOf(e.getMessage());
          why = m.split("\n")[0];
          what = e.getClass().getSimpleName() + (m.contains("CODE:") ? " " + m.substring(m.indexOf("CODE:"), Math.min(m.length(), m.indexOf("CODE:") + 9)) : "");
        }
        if (what != null) other.merge(what, 1, Integer::sum);
        // the timeline: each change of answer (SEND_OK, a status, an exception), timed
        String now = what == null ? "SEND_OK" : what;
        if (!now.equals(last)) {
          System.out.printf("  %tT.%<tL send %d: %s%s%n", System.currentTimeMillis(), i, now,
              why == null || what == null ? "" : " (" + why + ")");
          last = now;
        }
        Thread.sleep(5);
      }
    }
    System.out.printf("loadproduce: %d sends, %d SEND_OK, not acknowledged: %s%n", i, ok, other);
    check(ok > 0, "no send was acknowledged");
  }

  /** GROUP consumes from its start; once EXPECTED exists every msgId listed there must arrive. */
  void loadConsume(String topic, String group, String dir, String expected) throws Exception {
    Map<String, Integer> seen = new ConcurrentHashMap<>();
    java.io.BufferedWriter recv = java.nio.file.Files.newBufferedWriter(java.nio.file.Paths.get(dir, group + ".recv"));
    DefaultMQPushConsumer c = consumer(group);
    c.subscribe(topic, "*");
    c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
      for (MessageExt m : msgs) {
        seen.merge(m.getMsgId(), 1, Integer::sum);
        synchronized (recv) {
          try {
            recv.write(m.getMsgId() + "\n");
            recv.flush();
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        }
      }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    c.start();
    java.nio.file.Path exp = java.nio.file.Paths.get(expected);
    long end = System.currentTimeMillis() + 600_000;
    while (!java.nio.file.Files.exists(exp)) {
      if (System.currentTimeMillis() > end) throw new Fail("no " + expected + " within 600 s");
      Thread.sleep(100);
    }
    Map<Integer, String> want = readIds(expected);
    check(!want.isEmpty(), expected + " lists no message");
    Set<String> wantIds = new HashSet<>(want.values());
    end = System.currentTimeMillis() + 180_000;
    while (!seen.keySet().containsAll(wantIds) && System.currentTimeMillis() < end) Thread.sleep(100);
    List<Integer> missing = new ArrayList<>();
    for (Map.Entry<Integer, String> e : want.entrySet()) if (!seen.containsKey(e.getValue())) missing.add(e.getKey());
    Collections.sort(missing);
    long dups = seen.values().stream().filter(n -> n > 1).count();
    long extra = seen.keySet().stream().filter(id -> !wantIds.contains(id)).count();
    System.out.printf("loadconsume %s: %d acknowledged, %d distinct received, %d received more than once, %d not acknowledged%n",
        group, wantIds.size(), seen.size(), dups, extra);
    check(missing.isEmpty(), missing.size() + " acknowledged messages never arrived, sends " +
        missing.subList(0, Math.min(20, missing.size())) + (missing.size() > 20 ? " ..." : ""));
  }

  /** The body test_ha_java.c's body_of(i) sends: 4000 bytes of letter i % 26, ending "#%011d". */
  static String cBody(int i) {
    String tail = String.format("#%011d", i);
    return String.valueOf((char) ('a' + i % 26)).repeat(4000 - tail.length()) + tail;
  }

  void cbodies(String topic, String group, String file) throws Exception {
    Set<String> want = new HashSet<>();
    for (String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get(file)))
      if (!line.isBlank()) check(want.add(cBody(Integer.parseInt(line.trim()))), "listed twice: " + line);
    Received got = new Received();
    DefaultMQPushConsumer c = concurrentConsumer(group, topic, "*", got);
    got.expectExactly(want);
    awaitCommitted(c, topic);
  }

  static Message storeMsg(String topic, int i) {
    Message m = msg(topic, "Tag" + (i % 2), "skey-" + topic + "-" + i, storeBody(i));
    m.putUserProperty("idx", Integer.toString(i));
    return m;
  }

  void consume(String topic, String group, int from, int to, String idsFile) throws Exception {
    Map<Integer, String> ids = idsFile == null ? null : readIds(idsFile);
    if (ids != null)
      for (int i = from; i < to; i++) check(ids.containsKey(i), "no msgId of send " + i + " in " + idsFile);
    Received got = new Received();
    DefaultMQPushConsumer c = concurrentConsumer(group, topic, "*", got);
    Set<String> want = new HashSet<>();
    for (int i = from; i < to; i++) want.add(storeBody(i));
    got.expectExactly(want);
    for (MessageExt m : got.byBody.values()) {
      int i = Integer.parseInt(m.getUserProperty("idx"));
      check(body(m).equals(storeBody(i)) && ("skey-" + topic + "-" + i).equals(m.getKeys())
          && ("Tag" + (i % 2)).equals(m.getTags()), "message " + i + " differs: " + m);
      check(ids == null || ids.get(i).equals(m.getMsgId()),
          "message " + i + ": msgId " + m.getMsgId() + ", its send was answered " + (ids == null ? "" : ids.get(i)));
    }
    awaitCommitted(c, topic);
  }

  /**
   * The broker holds what the consumer has consumed of each queue: the client commits offsets
   * oneway (every 5 s and at shutdown), so a broker stopped right after a scenario could miss the
   * last commit and a later scenario resuming the group would see old messages again.
   */
  static void awaitCommitted(DefaultMQPushConsumer c, String topic) throws Exception {
    OffsetStore store = c.getDefaultMQPushConsumerImpl().getOffsetStore();
    Set<MessageQueue> mqs = c.fetchSubscribeMessageQueues(topic);
    await("the broker to hold the committed offsets of " + topic, () -> {
      try {
        c.getDefaultMQPushConsumerImpl().persistConsumerOffset();
        boolean all = true;
        for (MessageQueue mq : mqs) {
          long mine = store.readOffset(mq, ReadOffsetType.READ_FROM_MEMORY);
          if (mine < 0) continue; // nothing consumed from this queue
          long broker = store.readOffset(mq, ReadOffsetType.READ_FROM_STORE);
          if (broker != mine) {
            store.updateOffset(mq, mine, true); // reading from the store replaced it
            all = false;
          }
        }
        if (!all) Thread.sleep(100);
        return all;
      } catch (Exception e) {
        return false;
      }
    });
  }

  void query(String topic, int from, int to) throws Exception {
    DefaultMQProducer p = producer(topic + "_qg");
    long begin = System.currentTimeMillis() - 3_600_000, end = System.currentTimeMillis() + 60_000;
    for (int i = from; i < to; i++) {
      String key = "skey-" + topic + "-" + i;
      QueryResult r = null;
      for (int attempt = 0; r == null; attempt++) {
        try {
          r = p.queryMessage(topic, key, 32, begin, end);
        } catch (Exception e) {
          if (attempt >= 40) throw new Fail("queryMessage(" + key + "): " + e.getMessage());
          Thread.sleep(250); // the topic's route is still unknown
        }
      }
      List<MessageExt> hits = new ArrayList<>();
      for (MessageExt m : r.getMessageList()) if (key.equals(m.getKeys())) hits.add(m);
      check(hits.size() == 1, "queryMessage(" + key + ") found " + hits.size());
      check(body(hits.get(0)).equals(storeBody(i)), "queryMessage(" + key + ") body differs");
    }
  }

  void spread(String topic, int n, String[] brokers) throws Exception {
    DefaultMQProducer p = producer(topic + "_pg");
    for (String b : brokers) send(p, msg(topic, "warmup", null, "warmup-" + b), new MessageQueue(topic, b, 0));
    await("a route of " + topic + " over " + String.join(",", brokers), () -> {
      try {
        Set<String> b = new HashSet<>();
        for (MessageQueue q : p.fetchPublishMessageQueues(topic)) b.add(q.getBrokerName());
        return b.containsAll(List.of(brokers));
      } catch (Exception e) {
        return false;
      }
    });
    Map<String, Integer> gotPerBroker = new ConcurrentHashMap<>();
    Map<String, Set<String>> brokersPerConsumer = new ConcurrentHashMap<>();
    Received got = new Received();
    String group = topic + "_cg";
    List<DefaultMQPushConsumer> consumers = new ArrayList<>();
    for (String inst : new String[] {"c1", "c2"}) {
      DefaultMQPushConsumer c = consumer(group);
      c.setInstanceName(inst);
      c.subscribe(topic, "S");
      c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
        for (MessageExt m : msgs) {
          got.add(m);
          gotPerBroker.merge(ctx.getMessageQueue().getBrokerName(), 1, Integer::sum);
          brokersPerConsumer.computeIfAbsent(inst, k -> ConcurrentHashMap.newKeySet())
              .add(ctx.getMessageQueue().getBrokerName());
        }
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      });
      c.start();
      consumers.add(c);
    }
    // Sends begin once the group is balanced (each queue held by exactly one
    // instance): while a queue moves between instances both may consume it,
    // which is at-least-once delivery, not what this scenario checks.
    Set<MessageQueue> all = new HashSet<>(p.fetchPublishMessageQueues(topic));
    await("the group balanced over " + all.size() + " queues", () -> {
      Set<MessageQueue> held = new HashSet<>();
      int n0 = 0;
      for (DefaultMQPushConsumer c : consumers) {
        Set<MessageQueue> mine = new HashSet<>(c.getDefaultMQPushConsumerImpl().getRebalanceImpl()
            .getProcessQueueTable().keySet());
        mine.removeIf(q -> !q.getTopic().equals(topic)); // the group's %RETRY% queues too
        n0 += mine.size();
        held.addAll(mine);
        if (mine.isEmpty()) return false;
      }
      return n0 == held.size() && held.equals(all);
    });
    List<MessageQueue> mqs = new ArrayList<>(all);
    Map<String, Integer> sentPerBroker = new HashMap<>();
    Set<String> bodies = new HashSet<>();
    for (int i = 0; i < n; i++) {
      MessageQueue q = mqs.get(i % mqs.size());
      SendResult r = p.send(msg(topic, "S", "spread-" + i, "spread-" + i), q, 10_000);
      check(r.getSendStatus() == SendStatus.SEND_OK, "send to " + q + ": " + r.getSendStatus());
      sentPerBroker.merge(q.getBrokerName(), 1, Integer::sum);
      bodies.add("spread-" + i);
    }
    got.expectExactly(bodies);
    check(sentPerBroker.keySet().containsAll(List.of(brokers)), "sends reached only " + sentPerBroker.keySet());
    check(gotPerBroker.equals(sentPerBroker), "received per broker " + gotPerBroker + ", sent " + sentPerBroker);
    System.out.println("  spread " + topic + ": sent per broker " + sentPerBroker + ", consumer instances saw "
        + brokersPerConsumer);
  }
}
