// Order POP (PopMessageRequestHeader.order = true) with the 5.x remoting
// client (rocketmq-client 5.3.3, MQClientAPIImpl.popMessageAsync /
// ackMessageAsync: the 5.3.3 DefaultMQPushConsumer always pops with
// order=false, even with an orderly listener, so the order flag is sent
// through the client's API as an application or the proxy would) across a
// kill -9 of rmqhostd:
//   before: three messages into queue 0; an order POP hands out o-0; the
//           queue stays locked while o-0 is unacknowledged.
//   after (rmqhostd killed with SIGKILL and restarted on the same store):
//           the queue gives o-0 again (never o-1 first) once its invisible
//           time passed, reconsumeTimes 1 as the client reads it from the
//           answer's orderCountInfo; after its ack o-1 comes, reconsumeTimes 0.
// Prints "PASS <phase>" or "FAIL <phase>: why"; exit status 0 only on PASS.
//   java RmqPopOrderInterop NAMESRV BROKER_ADDR BROKER_NAME RUN_ID before|after
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.consumer.AckCallback;
import org.apache.rocketmq.client.consumer.AckResult;
import org.apache.rocketmq.client.consumer.AckStatus;
import org.apache.rocketmq.client.consumer.PopCallback;
import org.apache.rocketmq.client.consumer.PopResult;
import org.apache.rocketmq.client.consumer.PopStatus;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.header.AckMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.PopMessageRequestHeader;

public class RmqPopOrderInterop {
  static String broker, brokerName, topic, group;
  static MQClientAPIImpl api;

  static PopResult pop(long invisibleMs) throws Exception {
    PopMessageRequestHeader h = new PopMessageRequestHeader();
    h.setConsumerGroup(group);
    h.setTopic(topic);
    h.setQueueId(0);
    h.setMaxMsgNums(1);
    h.setInvisibleTime(invisibleMs);
    h.setPollTime(0);
    h.setBornTime(System.currentTimeMillis());
    h.setInitMode(0);
    h.setExpType("TAG");
    h.setExp("*");
    h.setOrder(Boolean.TRUE);
    CompletableFuture<PopResult> f = new CompletableFuture<>();
    api.popMessageAsync(brokerName, broker, h, 10000, new PopCallback() {
      public void onSuccess(PopResult r) { f.complete(r); }
      public void onException(Throwable e) { f.completeExceptionally(e); }
    });
    return f.get(15, TimeUnit.SECONDS);
  }

  static void ack(MessageExt m) throws Exception {
    AckMessageRequestHeader h = new AckMessageRequestHeader();
    h.setConsumerGroup(group);
    h.setTopic(topic);
    h.setQueueId(m.getQueueId());
    h.setExtraInfo(m.getProperty(MessageConst.PROPERTY_POP_CK));
    h.setOffset(m.getQueueOffset());
    CompletableFuture<AckResult> f = new CompletableFuture<>();
    api.ackMessageAsync(broker, 10000, new AckCallback() {
      public void onSuccess(AckResult r) { f.complete(r); }
      public void onException(Throwable e) { f.completeExceptionally(e); }
    }, h);
    AckResult r = f.get(15, TimeUnit.SECONDS);
    if (r.getStatus() != AckStatus.OK) throw new IllegalStateException("ack " + r);
  }

  static String body(MessageExt m) {
    return new String(m.getBody(), StandardCharsets.UTF_8);
  }

  // The one message of a FOUND answer, as "body/reconsumeTimes".
  static MessageExt one(PopResult r) {
    List<MessageExt> l = r.getMsgFoundList();
    if (r.getPopStatus() != PopStatus.FOUND || l == null || l.size() != 1)
      throw new IllegalStateException("want one message, got " + r);
    MessageExt m = l.get(0);
    if (m.getProperty(MessageConst.PROPERTY_POP_CK) == null)
      throw new IllegalStateException("no POP_CK on " + body(m));
    return m;
  }

  static String before(DefaultMQProducer p) throws Exception {
    MessageQueue q0 = new MessageQueue(topic, brokerName, 0);
    long deadline = System.currentTimeMillis() + 90000;
    for (int i = 0; i < 3; i++) {
      Message m = new Message(topic, "T", ("o-" + i).getBytes(StandardCharsets.UTF_8));
      SendResult r = null;
      while (r == null) {
        try {
          r = p.send(m, q0);
        } catch (Exception e) { // the route of a new topic, on a loaded machine
          if (System.currentTimeMillis() > deadline) throw e;
          Thread.sleep(500);
        }
      }
      if (r.getSendStatus() != SendStatus.SEND_OK) return "send " + r;
    }
    MessageExt m = one(pop(10000));
    if (!body(m).equals("o-0") || m.getReconsumeTimes() != 0)
      return "first order POP gave " + body(m) + "/" + m.getReconsumeTimes() + ", want o-0/0";
    PopResult again = pop(10000);
    if (again.getPopStatus() == PopStatus.FOUND)
      return "queue not locked while o-0 is in flight: " + again;
    return null;
  }

  static String after() throws Exception {
    long deadline = System.currentTimeMillis() + 60000;
    PopResult r;
    while ((r = pop(60000)).getPopStatus() != PopStatus.FOUND) {
      if (System.currentTimeMillis() > deadline) return "o-0 never came back after kill -9";
      Thread.sleep(200);
    }
    MessageExt m = one(r);
    if (!body(m).equals("o-0") || m.getReconsumeTimes() != 1)
      return "after kill -9 the queue gave " + body(m) + "/" + m.getReconsumeTimes()
          + ", want o-0/1";
    ack(m);
    m = one(pop(60000));
    if (!body(m).equals("o-1") || m.getReconsumeTimes() != 0)
      return "after the ack of o-0 the queue gave " + body(m) + "/" + m.getReconsumeTimes()
          + ", want o-1/0";
    ack(m);
    return null;
  }

  public static void main(String[] args) throws Exception {
    String namesrv = args[0], run = args[3], phase = args[4];
    broker = args[1];
    brokerName = args[2];
    topic = "PopOrderTopic_" + run;
    group = "pop_order_cg_" + run;
    DefaultMQProducer p = new DefaultMQProducer("pop_order_pg_" + run);
    p.setNamesrvAddr(namesrv);
    p.setSendMsgTimeout(15000); // a loaded test machine: the first send creates the topic
    String why;
    try {
      p.start();
      api = p.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl();
      why = phase.equals("before") ? before(p) : after();
    } catch (Exception e) {
      why = e.toString();
    } finally {
      p.shutdown();
    }
    System.out.println(why == null ? "PASS " + phase : "FAIL " + phase + ": " + why);
    System.exit(why == null ? 0 : 1);
  }
}
