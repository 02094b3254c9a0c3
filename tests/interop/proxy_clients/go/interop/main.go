// Command interop drives RocketMQ 5.x's Go client
// (github.com/apache/rocketmq-clients/golang/v5, gRPC) against rmqhost's
// proxy plugin; run_go.sh starts the daemon and runs it.
//
//   - Producer, normal messages: N bodies with a tag, two keys and user
//     properties; every send has a message id, all distinct.
//   - SimpleConsumer: each of the N is received exactly once with its body,
//     tag, keys, properties, message id, the queue offset its send receipt
//     gave, a born timestamp within its send and delivery attempt 1; all
//     but one are acknowledged; the last one's invisible duration is changed to 1 s
//     and it comes back once with attempt 2, then is acknowledged.
//   - Two more groups, with the TAG filter "Tag1" and the SQL92 filter
//     "idx >= N-3", receive exactly the messages they select, each once.
//   - A message received with a 2 s invisible duration and not acknowledged
//     comes back once with attempt 2.
//   - Delay: a message with a delivery timestamp 3 s ahead is received
//     exactly once, carrying that timestamp, and not before its time less
//     the store's timerPrecisionMs (1 s: Java's timer rounds down to it). Through
//     the client's own API when the route accepts DELAY messages; otherwise
//     the client must refuse it (the route says NORMAL only), and so must the
//     proxy a raw SendMessage of the client's generated stubs
//     (MESSAGE_PROPERTY_CONFLICT_WITH_TYPE, Java's enableTopicMessageTypeCheck).
//   - FIFO: when the route accepts FIFO messages, messages with a message
//     group are received exactly once with that group; otherwise the client
//     must refuse them.
//   - After everything is acknowledged nothing comes back.
//   - Transactions (tx.go): commit, rollback, and one left open that the
//     producer's checker commits when the check-back comes.
//   - Route cache (routecache.go): a send to a topic that does not exist
//     yet is refused, and accepted right after the topic is created.
//
// Prints "RESULT ok" or "RESULT fail <why>" and exits 0 or 1.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"
)

var problems []string

// the store's default timerPrecisionMs: a timer may come up to this early
const timerPrecision = time.Second

func problem(format string, args ...interface{}) {
	p := fmt.Sprintf(format, args...)
	fmt.Println("problem:", p)
	problems = append(problems, p)
}

func finish() {
	if len(problems) == 0 {
		fmt.Println("RESULT ok")
		os.Exit(0)
	}
	n := len(problems)
	if n > 5 {
		n = 5
	}
	fmt.Println("RESULT fail " + strings.Join(problems[:n], "; "))
	os.Exit(1)
}

func fatal(format string, args ...interface{}) {
	problem(format, args...)
	finish()
}

// receiveUntil receives until want messages came or deadline passed; an empty
// receive (MESSAGE_NOT_FOUND) is not an error.
func receiveUntil(c rmq.SimpleConsumer, want int, invisible, deadline time.Duration) []*rmq.MessageView {
	var got []*rmq.MessageView
	end := time.Now().Add(deadline)
	for len(got) < want && time.Now().Before(end) {
		mvs, err := c.Receive(context.Background(), 16, invisible)
		if err != nil {
			if !strings.Contains(err.Error(), "MESSAGE_NOT_FOUND") &&
				!strings.Contains(err.Error(), "no new message") &&
				!strings.Contains(err.Error(), "40401") {
				problem("receive: %v", err)
			}
		}
		got = append(got, mvs...)
		if len(mvs) == 0 {
			time.Sleep(100 * time.Millisecond)
		}
	}
	return got
}

// acceptedTypes asks the proxy for the topic's route with the client's own
// generated stubs: the message types its queues accept.
func acceptedTypes(endpoint, topic string) map[v2.MessageType]bool {
	conn, err := grpc.Dial(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fatal("dial %s: %v", endpoint, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "x-mq-client-id", "go-interop-raw")
	host, port := splitHostPort(endpoint)
	resp, err := v2.NewMessagingServiceClient(conn).QueryRoute(ctx, &v2.QueryRouteRequest{
		Topic: &v2.Resource{Name: topic},
		Endpoints: &v2.Endpoints{Scheme: v2.AddressScheme_IPv4,
			Addresses: []*v2.Address{{Host: host, Port: port}}},
	})
	if err != nil || resp.GetStatus().GetCode() != v2.Code_OK {
		fatal("QueryRoute %s: %v %v", topic, err, resp.GetStatus())
	}
	types := map[v2.MessageType]bool{}
	for _, q := range resp.GetMessageQueues() {
		for _, t := range q.GetAcceptMessageTypes() {
			types[t] = true
		}
	}
	return types
}

func splitHostPort(endpoint string) (string, int32) {
	i := strings.LastIndex(endpoint, ":")
	var port int32
	fmt.Sscanf(endpoint[i+1:], "%d", &port)
	return endpoint[:i], port
}

// rawTimerSend sends one message with a delivery timestamp through a raw
// SendMessage (the client's stubs) and returns the proxy's status: for a
// route that accepts no DELAY type the proxy must refuse it.
func rawTimerSend(endpoint, topic string, at time.Time) *v2.Status {
	conn, err := grpc.Dial(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fatal("dial %s: %v", endpoint, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "x-mq-client-id", "go-interop-raw")
	id := fmt.Sprintf("GOTIMER%025d", time.Now().UnixNano())
	tag := "Timer"
	resp, err := v2.NewMessagingServiceClient(conn).SendMessage(ctx, &v2.SendMessageRequest{
		Messages: []*v2.Message{{
			Topic:          &v2.Resource{Name: topic},
			UserProperties: map[string]string{"idx": "timer"},
			SystemProperties: &v2.SystemProperties{
				Tag: &tag, MessageId: id, MessageType: v2.MessageType_DELAY,
				BodyEncoding: v2.Encoding_IDENTITY, BornTimestamp: timestamppb.Now(),
				DeliveryTimestamp: timestamppb.New(at),
			},
			Body: []byte("go5-timer"),
		}},
	})
	if err != nil {
		fatal("raw timer SendMessage: %v", err)
	}
	return resp.GetStatus()
}

func main() {
	endpoint := flag.String("endpoint", "", "proxy host:port")
	topic := flag.String("topic", "", "topic")
	group := flag.String("group", "GoPopGroup", "consumer group")
	n := flag.Int("n", 20, "normal messages")
	logDir := flag.String("logdir", os.TempDir(), "client log root")
	broker := flag.String("broker", "", "broker role host:port (creates the transaction topic)")
	txTopic := flag.String("txtopic", "", "transaction topic to create and use (tx.go)")
	flag.Parse()
	go func() {
		time.Sleep(200 * time.Second)
		fmt.Println("RESULT fail hard timeout")
		os.Exit(3)
	}()
	os.Setenv("rocketmq.client.logRoot", *logDir)
	rmq.ResetLogger()
	creds := &credentials.SessionCredentials{}

	producer, err := rmq.NewProducer(&rmq.Config{Endpoint: *endpoint, Credentials: creds},
		rmq.WithTopics(*topic))
	if err != nil {
		fatal("NewProducer: %v", err)
	}
	if err := producer.Start(); err != nil {
		fatal("producer Start: %v", err)
	}
	sentIDs := map[int]string{}
	sentOffsets := map[int]int64{}
	// born timestamps are kept in milliseconds
	bornFrom := time.Now().Truncate(time.Millisecond)
	for i := 0; i < *n; i++ {
		msg := &rmq.Message{Topic: *topic, Body: []byte(fmt.Sprintf("go5-body-%d", i))}
		msg.SetTag(fmt.Sprintf("Tag%d", i%2))
		msg.SetKeys(fmt.Sprintf("go5-key-%d", i), "go5-common")
		msg.AddProperty("idx", fmt.Sprint(i))
		msg.AddProperty("lang", "go")
		r, err := producer.Send(context.Background(), msg)
		if err != nil || len(r) != 1 || r[0].MessageID == "" {
			fatal("send %d: %v (%d receipts)", i, err, len(r))
		}
		sentIDs[i] = r[0].MessageID
		sentOffsets[i] = r[0].Offset
	}
	bornTo := time.Now()
	distinct := map[string]bool{}
	for _, id := range sentIDs {
		distinct[id] = true
	}
	if len(distinct) != *n {
		problem("%d distinct message ids for %d sends", len(distinct), *n)
	}

	consumer, err := rmq.NewSimpleConsumer(&rmq.Config{Endpoint: *endpoint,
		ConsumerGroup: *group, Credentials: creds},
		rmq.WithAwaitDuration(time.Second),
		rmq.WithSubscriptionExpressions(map[string]*rmq.FilterExpression{*topic: rmq.SUB_ALL}))
	if err != nil {
		fatal("NewSimpleConsumer: %v", err)
	}
	if err := consumer.Start(); err != nil {
		fatal("consumer Start: %v", err)
	}

	// every normal message exactly once, as sent
	first := receiveUntil(consumer, *n, 60*time.Second, 40*time.Second)
	seen := map[int]int{}
	var last *rmq.MessageView
	for _, m := range first {
		var i int
		if _, err := fmt.Sscanf(m.GetProperties()["idx"], "%d", &i); err != nil {
			problem("a message without idx: %q", m.GetBody())
			continue
		}
		seen[i]++
		if string(m.GetBody()) != fmt.Sprintf("go5-body-%d", i) {
			problem("idx %d body %q", i, m.GetBody())
		}
		if m.GetTag() == nil || *m.GetTag() != fmt.Sprintf("Tag%d", i%2) {
			problem("idx %d tag %v", i, m.GetTag())
		}
		keys := append([]string(nil), m.GetKeys()...)
		sort.Strings(keys)
		if strings.Join(keys, ",") != fmt.Sprintf("go5-common,go5-key-%d", i) {
			problem("idx %d keys %v", i, m.GetKeys())
		}
		if m.GetProperties()["lang"] != "go" || len(m.GetProperties()) != 2 {
			problem("idx %d user properties %v", i, m.GetProperties())
		}
		if m.GetMessageId() != sentIDs[i] {
			problem("idx %d message id %s, sent as %s", i, m.GetMessageId(), sentIDs[i])
		}
		if m.GetDeliveryAttempt() != 1 {
			problem("idx %d delivery attempt %d", i, m.GetDeliveryAttempt())
		}
		if b := m.GetBornTimestamp(); b == nil || b.Before(bornFrom) || b.After(bornTo) {
			problem("idx %d born timestamp %v outside its send, %v .. %v", i, b, bornFrom, bornTo)
		}
		if m.GetOffset() != sentOffsets[i] {
			problem("idx %d queue offset %d, the send receipt said %d", i, m.GetOffset(), sentOffsets[i])
		}
		if i == *n-1 {
			last = m
		} else if err := consumer.Ack(context.Background(), m); err != nil {
			problem("ack idx %d: %v", i, err)
		}
	}
	for i := 0; i < *n; i++ {
		if seen[i] != 1 {
			problem("idx %d received %d times", i, seen[i])
		}
	}

	// filters: other groups see exactly what their expression selects
	for _, f := range []struct {
		group string
		expr  *rmq.FilterExpression
		want  func(i int) bool
	}{
		{*group + "Tag", rmq.NewFilterExpression("Tag1"), func(i int) bool { return i%2 == 1 }},
		{*group + "Sql", rmq.NewFilterExpressionWithType(fmt.Sprintf("idx >= %d", *n-3), rmq.SQL92),
			func(i int) bool { return i >= *n-3 }},
	} {
		want := 0
		for i := 0; i < *n; i++ {
			if f.want(i) {
				want++
			}
		}
		fc, err := rmq.NewSimpleConsumer(&rmq.Config{Endpoint: *endpoint,
			ConsumerGroup: f.group, Credentials: creds},
			rmq.WithAwaitDuration(time.Second),
			rmq.WithSubscriptionExpressions(map[string]*rmq.FilterExpression{*topic: f.expr}))
		if err != nil {
			fatal("NewSimpleConsumer %s: %v", f.group, err)
		}
		if err := fc.Start(); err != nil {
			fatal("consumer %s Start: %v", f.group, err)
		}
		got := receiveUntil(fc, want, 60*time.Second, 30*time.Second)
		// anything more would be a filter miss or a duplicate
		got = append(got, receiveUntil(fc, 1, 60*time.Second, 2*time.Second)...)
		count := map[int]int{}
		for _, m := range got {
			var i int
			fmt.Sscanf(m.GetProperties()["idx"], "%d", &i)
			count[i]++
			fc.Ack(context.Background(), m)
		}
		for i := 0; i < *n; i++ {
			if w := map[bool]int{true: 1, false: 0}[f.want(i)]; count[i] != w {
				problem("group %s: idx %d received %d times, expected %d", f.group, i, count[i], w)
			}
		}
		if len(got) != want {
			problem("group %s: %d messages, expected %d", f.group, len(got), want)
		}
		fc.GracefulStop()
	}

	// changeInvisibleDuration: the last one comes back at once with attempt 2
	if last != nil {
		if err := consumer.ChangeInvisibleDuration(last, time.Second); err != nil {
			problem("ChangeInvisibleDuration: %v", err)
		}
		again := receiveUntil(consumer, 1, 60*time.Second, 30*time.Second)
		if len(again) != 1 {
			problem("after ChangeInvisibleDuration %d messages came back", len(again))
		} else {
			m := again[0]
			if m.GetMessageId() != last.GetMessageId() || m.GetDeliveryAttempt() != 2 {
				problem("came back: %s attempt %d, expected %s attempt 2",
					m.GetMessageId(), m.GetDeliveryAttempt(), last.GetMessageId())
			}
			if err := consumer.Ack(context.Background(), m); err != nil {
				problem("ack after change: %v", err)
			}
		}
	}

	// not acknowledged: back after its invisible duration, attempt 2
	{
		msg := &rmq.Message{Topic: *topic, Body: []byte("go5-expire")}
		msg.SetTag("Expire")
		msg.AddProperty("idx", "expire")
		r, err := producer.Send(context.Background(), msg)
		if err != nil {
			fatal("send expire: %v", err)
		}
		got := receiveUntil(consumer, 1, 2*time.Second, 30*time.Second)
		if len(got) != 1 || got[0].GetMessageId() != r[0].MessageID || got[0].GetDeliveryAttempt() != 1 {
			problem("expire message first receive: %d messages", len(got))
		} else {
			back := receiveUntil(consumer, 1, 60*time.Second, 30*time.Second)
			if len(back) != 1 || back[0].GetMessageId() != r[0].MessageID {
				problem("unacknowledged message: %d came back", len(back))
			} else {
				if back[0].GetDeliveryAttempt() != 2 {
					problem("unacknowledged message came back with attempt %d", back[0].GetDeliveryAttempt())
				}
				if err := consumer.Ack(context.Background(), back[0]); err != nil {
					problem("ack expired: %v", err)
				}
			}
		}
	}

	types := acceptedTypes(*endpoint, *topic)
	fmt.Printf("route of %s accepts %v\n", *topic, types)

	// delay / timer
	{
		at := time.Now().Add(3 * time.Second).Truncate(time.Millisecond)
		msg := &rmq.Message{Topic: *topic, Body: []byte("go5-timer")}
		msg.SetTag("Timer")
		msg.AddProperty("idx", "timer")
		msg.SetDelayTimestamp(at)
		r, err := producer.Send(context.Background(), msg)
		var id string
		if types[v2.MessageType_DELAY] {
			if err != nil {
				fatal("delay send on a route that accepts DELAY: %v", err)
			}
			id = r[0].MessageID
		} else {
			if err == nil || !strings.Contains(err.Error(), "message type not match") {
				problem("delay send on a route without DELAY: %v, expected the client's type refusal", err)
			}
			// the proxy checks the type too (Java's enableTopicMessageTypeCheck)
			st := rawTimerSend(*endpoint, *topic, at)
			want := "the expected type is NORMAL, but actual type is DELAY"
			if st.GetCode() != v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE ||
				!strings.Contains(st.GetMessage(), want) {
				problem("raw timer SendMessage to a NORMAL topic: %v, expected "+
					"MESSAGE_PROPERTY_CONFLICT_WITH_TYPE %q", st, want)
			}
			fmt.Println("note: the route accepts no DELAY messages; the client and the proxy refused the timer")
		}
		var got []*rmq.MessageView
		if id != "" {
			got = receiveUntil(consumer, 1, 60*time.Second, 30*time.Second)
		}
		now := time.Now()
		if id == "" {
			// refused above
		} else if len(got) != 1 || got[0].GetMessageId() != id {
			problem("timer message: %d received", len(got))
		} else {
			m := got[0]
			if now.Before(at.Add(-timerPrecision)) {
				problem("timer message received %v before its time", at.Sub(now))
			}
			if m.GetDeliveryTimestamp() == nil || !m.GetDeliveryTimestamp().Equal(at) {
				problem("timer message delivery timestamp %v, sent %v", m.GetDeliveryTimestamp(), at)
			}
			if string(m.GetBody()) != "go5-timer" || m.GetDeliveryAttempt() != 1 {
				problem("timer message body %q attempt %d", m.GetBody(), m.GetDeliveryAttempt())
			}
			if err := consumer.Ack(context.Background(), m); err != nil {
				problem("ack timer: %v", err)
			}
		}
	}

	// FIFO with a message group
	{
		const fifoN = 4
		var fifoErr error
		for i := 0; i < fifoN && fifoErr == nil; i++ {
			msg := &rmq.Message{Topic: *topic, Body: []byte(fmt.Sprintf("go5-fifo-%d", i))}
			msg.SetTag("Fifo")
			msg.AddProperty("idx", fmt.Sprintf("fifo-%d", i))
			msg.SetMessageGroup("go5-group")
			_, fifoErr = producer.Send(context.Background(), msg)
		}
		if types[v2.MessageType_FIFO] {
			if fifoErr != nil {
				problem("FIFO send on a route that accepts FIFO: %v", fifoErr)
			}
			got := receiveUntil(consumer, fifoN, 60*time.Second, 30*time.Second)
			if len(got) != fifoN {
				problem("FIFO: %d of %d received", len(got), fifoN)
			}
			for _, m := range got {
				if m.GetMessageGroup() == nil || *m.GetMessageGroup() != "go5-group" {
					problem("FIFO message %q group %v", m.GetBody(), m.GetMessageGroup())
				}
				consumer.Ack(context.Background(), m)
			}
		} else {
			if fifoErr == nil || !strings.Contains(fifoErr.Error(), "message type not match") {
				problem("FIFO send on a route without FIFO: %v, expected the client's type refusal", fifoErr)
			}
			fmt.Println("note: the route accepts no FIFO messages; the client refused them")
		}
	}

	// nothing left
	if after := receiveUntil(consumer, 1, time.Second, 3*time.Second); len(after) != 0 {
		problem("%d messages came back after every ack (first: %q attempt %d)", len(after),
			after[0].GetBody(), after[0].GetDeliveryAttempt())
	}
	consumer.GracefulStop()
	producer.GracefulStop()
	if *txTopic != "" {
		transactions(*endpoint, *broker, *txTopic, creds)
	}
	if *broker != "" {
		routeCache(*endpoint, *broker, fmt.Sprintf("GoRouteCache%d", time.Now().UnixNano()%1000000))
	}
	finish()
}
