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

import org.apache.rocketmq.client.consumer.PopResult;
import org.apache.rocketmq.client.consumer.PopStatus;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

// The POP and ACK requests, body(), one() and the run: PopInteropClient.java.
public class RmqPopOrderInterop {
  static PopResult pop(PopInteropClient c, long invisibleMs) throws Exception {
    return c.pop(0, 1, invisibleMs, true);
  }

  static void ack(PopInteropClient c, MessageExt m) throws Exception {
    c.ack(c.topic, m.getQueueId(), m.getQueueOffset(),
        m.getProperty(MessageConst.PROPERTY_POP_CK));
  }

  static String body(MessageExt m) {
    return PopInteropClient.body(m);
  }

  static MessageExt one(PopResult r) {
    return PopInteropClient.one(r);
  }

  static String before(PopInteropClient c) throws Exception {
    MessageQueue q0 = new MessageQueue(c.topic, c.brokerName, 0);
    long deadline = System.currentTimeMillis() + 90000;
    for (int i = 0; i < 3; i++) {
      Message m = new Message(c.topic, "T", ("o-" + i).getBytes(StandardCharsets.UTF_8));
      SendResult r = c.sendUntil(m, q0, deadline);
      if (r.getSendStatus() != SendStatus.SEND_OK) return "send " + r;
    }
    MessageExt m = one(pop(c, 10000));
    if (!body(m).equals("o-0") || m.getReconsumeTimes() != 0)
      return "first order POP gave " + body(m) + "/" + m.getReconsumeTimes() + ", want o-0/0";
    PopResult again = pop(c, 10000);
    if (again.getPopStatus() == PopStatus.FOUND)
      return "queue not locked while o-0 is in flight: " + again;
    return null;
  }

  static String after(PopInteropClient c) throws Exception {
    long deadline = System.currentTimeMillis() + 60000;
    PopResult r;
    while ((r = pop(c, 60000)).getPopStatus() != PopStatus.FOUND) {
      if (System.currentTimeMillis() > deadline) return "o-0 never came back after kill -9";
      Thread.sleep(200);
    }
    MessageExt m = one(r);
    if (!body(m).equals("o-0") || m.getReconsumeTimes() != 1)
      return "after kill -9 the queue gave " + body(m) + "/" + m.getReconsumeTimes()
          + ", want o-0/1";
    ack(c, m);
    m = one(pop(c, 60000));
    if (!body(m).equals("o-1") || m.getReconsumeTimes() != 0)
      return "after the ack of o-0 the queue gave " + body(m) + "/" + m.getReconsumeTimes()
          + ", want o-1/0";
    ack(c, m);
    return null;
  }

  public static void main(String[] args) {
    String namesrv = args[0], run = args[3], phase = args[4];
    PopInteropClient.runAndExit(phase, namesrv, "pop_order_pg_" + run, args[1], args[2],
        "PopOrderTopic_" + run, "pop_order_cg_" + run,
        c -> phase.equals("before") ? before(c) : after(c));
  }
}
