// Command aclinterop drives RocketMQ 5.x's Go client with credentials
// against rmqhost's proxy plugin while the acl plugin guards the broker
// (run_acl_go.sh writes the plain_acl.yml and starts the daemon):
//   - the right AccessKey/SecretKey: a producer sends N messages to a topic
//     the account may PUB|SUB, a SimpleConsumer of a group it may SUB
//     receives and acknowledges each exactly once;
//   - a wrong secret: the producer gets no message through and the proxy's
//     answer is UNAUTHORIZED (40100) "Check signature failed for
//     accessKey=<AK>" (in the client's error, or — when the client only says
//     it has no route — in a raw QueryRoute signed as the client signs);
//   - a key no account has: UNAUTHORIZED "No acl config for <AK>", likewise;
//   - a topic the account may only SUB: the send is refused UNAUTHORIZED
//     "No default permission for topic:<topic>".
//
// Prints "RESULT ok" or "RESULT fail <why>".
package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/tls"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	gcreds "google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
)

var problems []string

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

// rawRoute is the client's QueryRoute made with its generated stubs and
// signed as the client signs (HMAC-SHA1 of x-mq-date-time, hex).
func rawRoute(endpoint, ak, sk, topic string) *v2.Status {
	conn, err := grpc.Dial(endpoint, grpc.WithTransportCredentials(
		gcreds.NewTLS(&tls.Config{InsecureSkipVerify: true})))
	if err != nil {
		fatal("dial %s: %v", endpoint, err)
	}
	defer conn.Close()
	now := time.Now().UTC().Format("20060102T150405Z")
	mac := hmac.New(sha1.New, []byte(sk))
	mac.Write([]byte(now))
	auth := fmt.Sprintf("MQv2-HMAC-SHA1 Credential=%s, SignedHeaders=x-mq-date-time, Signature=%s",
		ak, hex.EncodeToString(mac.Sum(nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "x-mq-client-id", "go-acl-raw",
		"x-mq-date-time", now, "authorization", auth)
	i := strings.LastIndex(endpoint, ":")
	var port int32
	fmt.Sscanf(endpoint[i+1:], "%d", &port)
	resp, err := v2.NewMessagingServiceClient(conn).QueryRoute(ctx, &v2.QueryRouteRequest{
		Topic: &v2.Resource{Name: topic},
		Endpoints: &v2.Endpoints{Scheme: v2.AddressScheme_IPv4,
			Addresses: []*v2.Address{{Host: endpoint[:i], Port: port}}},
	})
	if err != nil {
		fatal("raw QueryRoute: %v", err)
	}
	return resp.GetStatus()
}

func refused(endpoint, ak, sk, topic, text, what string) {
	p, err := rmq.NewProducer(&rmq.Config{Endpoint: endpoint,
		Credentials: &credentials.SessionCredentials{AccessKey: ak, AccessSecret: sk}},
		rmq.WithTopics(topic))
	if err != nil {
		fatal("%s: NewProducer: %v", what, err)
	}
	err = p.Start()
	if err == nil {
		_, err = p.Send(context.Background(), &rmq.Message{Topic: topic, Body: []byte("must-not-pass")})
		if err == nil {
			problem("%s: the send succeeded", what)
		}
	}
	p.GracefulStop()
	if err == nil {
		return
	}
	if strings.Contains(err.Error(), "40100") || strings.Contains(err.Error(), "UNAUTHORIZED") {
		if !strings.Contains(err.Error(), text) {
			problem("%s: %v, wanted '%s'", what, err, text)
		} else {
			fmt.Printf("%s: refused as expected (%v)\n", what, err)
		}
		return
	}
	fmt.Printf("%s: the client says %v; a raw QueryRoute shows the answer\n", what, err)
	st := rawRoute(endpoint, ak, sk, topic)
	if st.GetCode() != v2.Code_UNAUTHORIZED || !strings.Contains(st.GetMessage(), text) {
		problem("%s: raw QueryRoute %v, wanted UNAUTHORIZED '%s'", what, st, text)
	} else {
		fmt.Printf("%s (raw QueryRoute): %v %s\n", what, st.GetCode(), st.GetMessage())
	}
}

func main() {
	endpoint := flag.String("endpoint", "", "proxy host:port")
	ak := flag.String("ak", "", "access key")
	sk := flag.String("sk", "", "secret key")
	topic := flag.String("topic", "", "PUB|SUB topic")
	subOnly := flag.String("subonly", "", "SUB-only topic")
	group := flag.String("group", "", "consumer group")
	n := flag.Int("n", 5, "messages")
	logDir := flag.String("logdir", os.TempDir(), "client log root")
	flag.Parse()
	go func() {
		time.Sleep(200 * time.Second)
		fmt.Println("RESULT fail hard timeout")
		os.Exit(3)
	}()
	os.Setenv("rocketmq.client.logRoot", *logDir)
	rmq.ResetLogger()
	creds := &credentials.SessionCredentials{AccessKey: *ak, AccessSecret: *sk}
	producer, err := rmq.NewProducer(&rmq.Config{Endpoint: *endpoint, Credentials: creds},
		rmq.WithTopics(*topic))
	if err != nil {
		fatal("NewProducer: %v", err)
	}
	if err := producer.Start(); err != nil {
		fatal("producer Start with the right key: %v", err)
	}
	ids := map[string]bool{}
	for i := 0; i < *n; i++ {
		r, err := producer.Send(context.Background(),
			&rmq.Message{Topic: *topic, Body: []byte(fmt.Sprintf("go-acl-%d", i))})
		if err != nil || len(r) != 1 {
			fatal("send %d with the right key: %v", i, err)
		}
		ids[r[0].MessageID] = true
	}
	producer.GracefulStop()
	consumer, err := rmq.NewSimpleConsumer(&rmq.Config{Endpoint: *endpoint, ConsumerGroup: *group,
		Credentials: creds}, rmq.WithAwaitDuration(10*time.Second),
		rmq.WithSubscriptionExpressions(map[string]*rmq.FilterExpression{*topic: rmq.SUB_ALL}))
	if err != nil {
		fatal("NewSimpleConsumer: %v", err)
	}
	if err := consumer.Start(); err != nil {
		fatal("consumer Start with the right key: %v", err)
	}
	got := map[string]int{}
	end := time.Now().Add(60 * time.Second)
	for len(got) < *n && time.Now().Before(end) {
		mvs, err := consumer.Receive(context.Background(), 16, 30*time.Second)
		if err != nil && !strings.Contains(err.Error(), "MESSAGE_NOT_FOUND") &&
			!strings.Contains(err.Error(), "no new message") {
			problem("receive: %v", err)
			time.Sleep(100 * time.Millisecond)
		}
		for _, m := range mvs {
			got[m.GetMessageId()]++
			if err := consumer.Ack(context.Background(), m); err != nil {
				problem("ack: %v", err)
			}
		}
	}
	consumer.GracefulStop()
	for id := range ids {
		if got[id] != 1 {
			problem("message %s received %d times", id, got[id])
		}
	}
	refused(*endpoint, *ak, *sk+"-wrong", *topic, "Check signature failed for accessKey="+*ak,
		"wrong secret key")
	refused(*endpoint, "goNobody", *sk, *topic, "No acl config for goNobody", "unknown access key")
	refused(*endpoint, *ak, *sk, *subOnly, "No default permission for topic:"+*subOnly,
		"PUB on a SUB-only topic")
	finish()
}
