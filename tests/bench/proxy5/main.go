// Command proxy5bench measures what a RocketMQ 5.x client sees of a gRPC
// endpoint (rmqhost's proxy plugin or Java's rocketmq-proxy): the Go client
// github.com/apache/rocketmq-clients/golang/v5 sends -n messages of -size
// bytes from -c goroutines (synchronous sends, so -c is the number in
// flight), then -c SimpleConsumers receive them in batches of -batch and
// acknowledge each. It prints one line per phase:
//
//	send n=... secs=... rate=... p50_ms=... p99_ms=... errors=...
//	recv n=... secs=... rate=... p50_ms=... p99_ms=... errors=...
//
// where a receive latency is one Receive call. The recv line also gives
// ack_p50_ms/ack_p99_ms (one Ack call) and tail_secs: the receive+ack rate
// is n over the time until the last message was acknowledged; once it is,
// the Receives still long-polling (consumers that found every remaining
// message in another's hands wait up to the await duration, 10 s) are
// cancelled, and tail_secs is how long that took. -ackc acknowledges each
// batch from that many goroutines per consumer (1: one Ack after another).
// It is a benchmark, not a test: it checks only that every message sent was
// received, and says so.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
)

type latencies struct {
	mu sync.Mutex
	v  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.v = append(l.v, d)
	l.mu.Unlock()
}

func (l *latencies) pct(p float64) float64 {
	if len(l.v) == 0 {
		return 0
	}
	sort.Slice(l.v, func(i, j int) bool { return l.v[i] < l.v[j] })
	i := int(float64(len(l.v)-1) * p)
	return float64(l.v[i].Microseconds()) / 1000
}

func main() {
	endpoint := flag.String("endpoint", "127.0.0.1:8081", "gRPC endpoint")
	topic := flag.String("topic", "BenchTopic5", "topic (must exist)")
	group := flag.String("group", "BenchGroup5", "consumer group")
	n := flag.Int("n", 20000, "messages")
	c := flag.Int("c", 32, "concurrent senders / receivers")
	size := flag.Int("size", 1024, "body bytes")
	batch := flag.Int("batch", 32, "messages per Receive")
	ackc := flag.Int("ackc", 1, "concurrent Acks per consumer (1: sequential)")
	logDir := flag.String("logdir", os.TempDir(), "client log folder")
	recv := flag.Bool("recv", true, "receive and acknowledge what was sent")
	send := flag.Bool("send", true, "send -n messages first (false: receive -n sent before)")
	flag.Parse()
	os.Setenv("rocketmq.client.logRoot", *logDir)
	os.Setenv("mq.consoleAppender.enabled", "false")
	rmq.ResetLogger()
	creds := &credentials.SessionCredentials{}
	cfg := &rmq.Config{Endpoint: *endpoint, Credentials: creds}

	sent := *n
	if *send {
		sent = sendPhase(cfg, *topic, *n, *c, *size)
	}
	if *recv {
		recvPhase(*endpoint, creds, *topic, *group, sent, *c, *batch, *ackc)
	}
}

// sendPhase sends n messages of size bytes from c goroutines; it returns
// how many were sent.
func sendPhase(cfg *rmq.Config, topic string, n, c, size int) int {
	producer, err := rmq.NewProducer(cfg, rmq.WithTopics(topic))
	if err != nil {
		fmt.Println("NewProducer:", err)
		os.Exit(1)
	}
	if err = producer.Start(); err != nil {
		fmt.Println("producer start:", err)
		os.Exit(1)
	}
	body := make([]byte, size)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	var sendLat latencies
	var sendErrs, next int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for atomic.AddInt64(&next, 1) <= int64(n) {
				t := time.Now()
				_, err := producer.Send(context.Background(), &rmq.Message{Topic: topic, Body: body})
				if err != nil {
					atomic.AddInt64(&sendErrs, 1)
					continue
				}
				sendLat.add(time.Since(t))
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	sent := len(sendLat.v)
	fmt.Printf("send n=%d secs=%.2f rate=%.0f p50_ms=%.2f p99_ms=%.2f errors=%d\n",
		sent, secs, float64(sent)/secs, sendLat.pct(0.50), sendLat.pct(0.99), sendErrs)
	producer.GracefulStop()
	return sent
}

// recvPhase receives and acknowledges sent messages with c SimpleConsumers
// taking batches of batch, acknowledging each batch from ackc goroutines;
// it exits 1 when fewer came.
func recvPhase(endpoint string, creds *credentials.SessionCredentials, topic, group string,
	sent, c, batch, ackc int) {
	var wg sync.WaitGroup
	var recvLat, ackLat latencies
	var doneAt atomic.Value // time.Time the last message was acknowledged
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got, recvErrs, emptyPolls int64
	start := time.Now()
	deadline := start.Add(time.Duration(60+sent/500) * time.Second)
	consumers := make([]rmq.SimpleConsumer, c)
	for i := range consumers {
		sc, err := rmq.NewSimpleConsumer(&rmq.Config{Endpoint: endpoint,
			ConsumerGroup: group, Credentials: creds},
			rmq.WithAwaitDuration(10*time.Second),
			rmq.WithSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.SUB_ALL}))
		if err != nil {
			fmt.Println("NewSimpleConsumer:", err)
			os.Exit(1)
		}
		if err = sc.Start(); err != nil {
			fmt.Println("consumer start:", err)
			os.Exit(1)
		}
		consumers[i] = sc
	}
	start = time.Now()
	for _, sc := range consumers {
		wg.Add(1)
		go func(sc rmq.SimpleConsumer) {
			defer wg.Done()
			for atomic.LoadInt64(&got) < int64(sent) && time.Now().Before(deadline) {
				t := time.Now()
				mvs, err := sc.Receive(ctx, int32(batch), 30*time.Second)
				if err != nil {
					if ctx.Err() != nil {
						break // every message is in: this was an idle long poll
					}
					if len(mvs) == 0 {
						if atomic.AddInt64(&emptyPolls, 1) == 1 {
							fmt.Println("first empty receive:", err)
						}
						continue // MESSAGE_NOT_FOUND after the long poll
					}
					atomic.AddInt64(&recvErrs, 1)
				}
				recvLat.add(time.Since(t))
				ackAll(sc, mvs, ackc, &ackLat, &recvErrs)
				if atomic.AddInt64(&got, int64(len(mvs))) >= int64(sent) {
					doneAt.Store(time.Now())
					cancel()
				}
			}
		}(sc)
	}
	wg.Wait()
	end := time.Now()
	last, ok := doneAt.Load().(time.Time)
	if !ok {
		last = end
	}
	secs := last.Sub(start).Seconds()
	fmt.Printf("recv n=%d secs=%.2f rate=%.0f p50_ms=%.2f p99_ms=%.2f ack_p50_ms=%.2f "+
		"ack_p99_ms=%.2f tail_secs=%.2f ackc=%d errors=%d\n",
		got, secs, float64(got)/secs, recvLat.pct(0.50), recvLat.pct(0.99), ackLat.pct(0.50),
		ackLat.pct(0.99), end.Sub(last).Seconds(), ackc, recvErrs)
	for _, sc := range consumers {
		sc.GracefulStop()
	}
	if got < int64(sent) {
		fmt.Printf("incomplete: received %d of %d\n", got, sent)
		os.Exit(1)
	}
}

// ackAll acknowledges mvs from up to ackc goroutines, timing each Ack.
func ackAll(sc rmq.SimpleConsumer, mvs []*rmq.MessageView, ackc int, lat *latencies,
	errs *int64) {
	var next int64 = -1
	var wg sync.WaitGroup
	for g := 0; g < ackc && g < len(mvs); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := atomic.AddInt64(&next, 1); i < int64(len(mvs)); i = atomic.AddInt64(&next, 1) {
				t := time.Now()
				if err := sc.Ack(context.Background(), mvs[i]); err != nil {
					atomic.AddInt64(errs, 1)
					continue
				}
				lat.add(time.Since(t))
			}
		}()
	}
	wg.Wait()
}
