// What the POP interop programs with the 5.x remoting client
// (RmqPopOrderInterop, RmqPopRetryInterop; rocketmq-client 5.3.3) share:
// the producer they start (its MQClientAPIImpl issues the POP and ACK
// requests as the push consumer or the proxy would), a POP_MESSAGE and an
// ACK_MESSAGE through that API, a send that waits out the route of a new
// topic, and the PASS/FAIL line and exit status of a run.
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
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.header.AckMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.PopMessageRequestHeader;

final class PopInteropClient {
  final String broker, brokerName, topic, group;
  final DefaultMQProducer producer;
  final MQClientAPIImpl api;

  interface Check {
    // null when every expectation held, else why not
    String run(PopInteropClient c) throws Exception;
  }

  private PopInteropClient(DefaultMQProducer p, String broker, String brokerName, String topic,
      String group) {
    this.producer = p;
    this.broker = broker;
    this.brokerName = brokerName;
    this.topic = topic;
    this.group = group;
    this.api = p.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl();
  }

  // Starts producer group `producerGroup` at namesrv, runs the check,
  // shuts the producer down, prints "PASS label" or "FAIL label: why" and
  // exits 0 only on PASS.
  static void runAndExit(String label, String namesrv, String producerGroup, String broker,
      String brokerName, String topic, String group, Check check) {
    DefaultMQProducer p = new DefaultMQProducer(producerGroup);
    p.setNamesrvAddr(namesrv);
    p.setSendMsgTimeout(15000); // a loaded test machine: the first send creates the topic
    String why;
    try {
      p.start();
      why = check.run(new PopInteropClient(p, broker, brokerName, topic, group));
    } catch (Exception e) {
      why = e.toString();
    } finally {
      p.shutdown();
    }
    System.out.println(why == null ? "PASS " + label : "FAIL " + label + ": " + why);
    System.exit(why == null ? 0 : 1);
  }

  // Sends m to q, retried until `deadline` while the route of a new topic
  // is not there yet (a loaded machine).
  SendResult sendUntil(Message m, MessageQueue q, long deadline) throws Exception {
    while (true) {
      try {
        return producer.send(m, q);
      } catch (Exception e) {
        if (System.currentTimeMillis() > deadline) throw e;
        Thread.sleep(500);
      }
    }
  }

  PopResult pop(int queueId, int maxMsgNums, long invisibleMs, boolean order) throws Exception {
    PopMessageRequestHeader h = new PopMessageRequestHeader();
    h.setConsumerGroup(group);
    h.setTopic(topic);
    h.setQueueId(queueId);
    h.setMaxMsgNums(maxMsgNums);
    h.setInvisibleTime(invisibleMs);
    h.setPollTime(0);
    h.setBornTime(System.currentTimeMillis());
    h.setInitMode(0);
    h.setExpType("TAG");
    h.setExp("*");
    h.setOrder(order ? Boolean.TRUE : Boolean.FALSE);
    CompletableFuture<PopResult> f = new CompletableFuture<>();
    api.popMessageAsync(brokerName, broker, h, 10000, new PopCallback() {
      public void onSuccess(PopResult r) { f.complete(r); }
      public void onException(Throwable e) { f.completeExceptionally(e); }
    });
    return f.get(15, TimeUnit.SECONDS);
  }

  // ACK_MESSAGE of the message at (ackTopic, queueId, offset) with its
  // POP_CK as extraInfo; throws unless the answer is OK.
  void ack(String ackTopic, int queueId, long offset, String extraInfo) throws Exception {
    AckMessageRequestHeader h = new AckMessageRequestHeader();
    h.setConsumerGroup(group);
    h.setTopic(ackTopic);
    h.setQueueId(queueId);
    h.setExtraInfo(extraInfo);
    h.setOffset(offset);
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

  // The one message of a FOUND answer, with its POP_CK.
  static MessageExt one(PopResult r) {
    List<MessageExt> l = r.getMsgFoundList();
    if (r.getPopStatus() != PopStatus.FOUND || l == null || l.size() != 1)
      throw new IllegalStateException("want one message, got " + r);
    MessageExt m = l.get(0);
    if (m.getProperty(MessageConst.PROPERTY_POP_CK) == null)
      throw new IllegalStateException("no POP_CK on " + body(m));
    return m;
  }
}
