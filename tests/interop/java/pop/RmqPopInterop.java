// The 5.x remoting client (rocketmq-client 5.3.3) consuming by POP from
// rmqhost: the producer's client asks the broker (SET_MESSAGE_REQUEST_MODE)
// to serve the group by POP, a DefaultMQPushConsumer with
// clientRebalance=false learns that through QUERY_ASSIGNMENT and pops
// (POP_MESSAGE), acknowledges (ACK_MESSAGE) and, for the one message it
// answers RECONSUME_LATER the first time, changes its invisible time
// (CHANGE_MESSAGE_INVISIBLETIME) so it comes back with reconsumeTimes 1.
// Prints "PASS pop" or "FAIL pop: why"; exit status 0 only on PASS.
//   java RmqPopInterop NAMESRV BROKER_ADDR RUN_ID
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageRequestMode;

public class RmqPopInterop {
  static final int N = 20;
  static final String RETRIED = "pop-7";

  public static void main(String[] args) throws Exception {
    String namesrv = args[0], broker = args[1], run = args[2];
    String topic = "PopTopic_" + run, group = "pop_cg_" + run;
    DefaultMQProducer p = new DefaultMQProducer("pop_pg_" + run);
    p.setNamesrvAddr(namesrv);
    p.start();
    DefaultMQPushConsumer c = null;
    String why = null;
    try {
      Set<String> sent = new HashSet<>();
      for (int i = 0; i < N; i++) {
        Message m = new Message(topic, "T", "k" + i, ("pop-" + i).getBytes(StandardCharsets.UTF_8));
        SendResult r = p.send(m);
        if (r.getSendStatus() != SendStatus.SEND_OK) throw new IllegalStateException("send " + r);
        sent.add("pop-" + i);
      }
      p.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl()
          .setMessageRequestMode(broker, topic, group, MessageRequestMode.POP, 0, 5000);

      Map<String, List<Integer>> seen = new ConcurrentHashMap<>();
      List<String> noReceipt = new CopyOnWriteArrayList<>();
      c = new DefaultMQPushConsumer(group);
      c.setNamesrvAddr(namesrv);
      c.setClientRebalance(false);
      c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
      c.subscribe(topic, "*");
      c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
        ConsumeConcurrentlyStatus st = ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        for (MessageExt m : msgs) {
          String body = new String(m.getBody(), StandardCharsets.UTF_8);
          if (m.getProperty(MessageConst.PROPERTY_POP_CK) == null) noReceipt.add(body);
          seen.computeIfAbsent(body, k -> new CopyOnWriteArrayList<>()).add(m.getReconsumeTimes());
          if (body.equals(RETRIED) && m.getReconsumeTimes() == 0)
            st = ConsumeConcurrentlyStatus.RECONSUME_LATER;
        }
        return st;
      });
      c.setConsumeMessageBatchMaxSize(1);
      c.start();
      long deadline = System.currentTimeMillis() + 90000;
      while (System.currentTimeMillis() < deadline) {
        List<Integer> r = seen.get(RETRIED);
        if (seen.keySet().containsAll(sent) && r != null && r.size() >= 2) break;
        Thread.sleep(100);
      }
      Thread.sleep(2000); // a duplicate delivery would show up here
      Set<String> missing = new HashSet<>(sent);
      missing.removeAll(seen.keySet());
      if (!missing.isEmpty()) why = "not received: " + missing;
      else if (!noReceipt.isEmpty()) why = "no POP_CK (not consumed by POP): " + noReceipt;
      else if (!seen.get(RETRIED).equals(List.of(0, 1)))
        why = RETRIED + " reconsumeTimes seen " + seen.get(RETRIED) + ", want [0, 1]";
      else {
        for (Map.Entry<String, List<Integer>> e : seen.entrySet())
          if (!e.getKey().equals(RETRIED) && !e.getValue().equals(List.of(0)))
            why = e.getKey() + " delivered " + e.getValue();
      }
    } catch (Exception e) {
      why = e.toString();
    } finally {
      if (c != null) c.shutdown();
      p.shutdown();
    }
    System.out.println(why == null ? "PASS pop" : "FAIL pop: " + why);
    System.exit(why == null ? 0 : 1);
  }
}
