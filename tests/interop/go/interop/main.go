// Command interop drives rmqhost's all-in-one daemon with the Go client
// (github.com/apache/rocketmq-client-go/v2) and checks what a Go user relies on:
//
//   - a producer's SendSync answers SEND_OK for every message;
//   - a push consumer subscribed with a TAG selector ("TagA || TagC") gets
//     exactly the messages of those tags, each once, with body and keys intact,
//     and none of the other tag;
//   - an orderly consumer gets every message of a sharding key from one queue,
//     in the order it was sent (the producer hashes the key to the queue).
//
// It prints one line per finding and exits 1 when any check fails, 0 when all
// pass. Usage: interop -ns 127.0.0.1:PORT
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

const (
	tagTopic   = "GoTagTopic"
	orderTopic = "GoOrderTopic"
	tagCount   = 30 // TagA, TagB, TagC in turn
	orderKeys  = 3
	perKey     = 20
	selector   = "TagA || TagC"
)

var failures []string

func fail(format string, args ...interface{}) {
	msg := fmt.Sprintf(format, args...)
	failures = append(failures, msg)
	fmt.Println("FAIL:", msg)
}

func tagOf(i int) string { return []string{"TagA", "TagB", "TagC"}[i%3] }

// collector gathers deliveries under a lock and says when the expected set
// is complete.
type collector struct {
	mu   sync.Mutex
	seen map[string]int // body -> deliveries
	bad  []string       // deliveries that break a rule, as they came
	done chan struct{}
	want int
	once sync.Once
}

func newCollector(want int) *collector {
	return &collector{seen: map[string]int{}, done: make(chan struct{}), want: want}
}

func (c *collector) add(body string, problem string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[body]++
	if problem != "" {
		c.bad = append(c.bad, problem)
	}
	if len(c.seen) >= c.want {
		c.once.Do(func() { close(c.done) })
	}
}

// wait returns once every expected body arrived (or the deadline passed),
// then leaves a short window for deliveries that should not happen.
func (c *collector) wait(deadline time.Duration) {
	select {
	case <-c.done:
		time.Sleep(3 * time.Second)
	case <-time.After(deadline):
	}
}

// sendProblem says why a send did not answer SEND_OK (r is nil on error).
func sendProblem(r *primitive.SendResult, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("status %d, want SEND_OK", r.Status)
}

func produce(p rocketmq.Producer) {
	ctx := context.Background()
	for i := 0; i < tagCount; i++ {
		m := primitive.NewMessage(tagTopic, []byte(fmt.Sprintf("tag-%d", i)))
		m.WithTag(tagOf(i))
		m.WithKeys([]string{fmt.Sprintf("key-%d", i)})
		r, err := p.SendSync(ctx, m)
		if err != nil || r.Status != primitive.SendOK {
			fail("send %s #%d: %s", tagTopic, i, sendProblem(r, err))
			return
		}
	}
	// round-robin over the keys, so a consumer that mixes queues or
	// reorders one would show it
	for s := 0; s < perKey; s++ {
		for k := 0; k < orderKeys; k++ {
			m := primitive.NewMessage(orderTopic, []byte(fmt.Sprintf("order-%d:%d", k, s)))
			m.WithShardingKey(fmt.Sprintf("order-%d", k))
			r, err := p.SendSync(ctx, m)
			if err != nil || r.Status != primitive.SendOK {
				fail("send %s key %d seq %d: %s", orderTopic, k, s, sendProblem(r, err))
				return
			}
		}
	}
}

func consumeByTag(ns string) {
	want := 0
	for i := 0; i < tagCount; i++ {
		if tagOf(i) != "TagB" {
			want++
		}
	}
	col := newCollector(want)
	c, err := rocketmq.NewPushConsumer(consumer.WithGroupName("go_tag_consumer"),
		consumer.WithNameServer([]string{ns}),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		fail("tag consumer: %v", err)
		return
	}
	err = c.Subscribe(tagTopic, consumer.MessageSelector{Type: consumer.TAG, Expression: selector},
		func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			for _, m := range msgs {
				body := string(m.Body)
				var i int
				problem := ""
				if _, e := fmt.Sscanf(body, "tag-%d", &i); e != nil {
					problem = fmt.Sprintf("unexpected body %q", body)
				} else if m.GetTags() != tagOf(i) || m.GetTags() == "TagB" {
					problem = fmt.Sprintf("body %q came with tag %q outside %q (sent %s)",
						body, m.GetTags(), selector, tagOf(i))
				} else if m.GetKeys() != fmt.Sprintf("key-%d", i) {
					problem = fmt.Sprintf("body %q came with keys %q", body, m.GetKeys())
				}
				col.add(body, problem)
			}
			return consumer.ConsumeSuccess, nil
		})
	if err == nil {
		err = c.Start()
	}
	if err != nil {
		fail("tag consumer subscribe/start: %v", err)
		return
	}
	defer c.Shutdown()
	col.wait(90 * time.Second)
	col.mu.Lock()
	defer col.mu.Unlock()
	for _, b := range col.bad {
		fail("tag consumer: %s", b)
	}
	got := 0
	for i := 0; i < tagCount; i++ {
		body := fmt.Sprintf("tag-%d", i)
		n := col.seen[body]
		got += n
		if tagOf(i) == "TagB" && n != 0 {
			fail("tag consumer got %s (TagB) %d times", body, n)
		} else if tagOf(i) != "TagB" && n != 1 {
			fail("tag consumer got %s (%s) %d times, want once", body, tagOf(i), n)
		}
	}
	fmt.Printf("tag consumer (%s): %d deliveries, want %d\n", selector, got, want)
	if got != want {
		fail("tag consumer: %d deliveries, want exactly %d", got, want)
	}
}

func consumeInOrder(ns string) {
	type position struct {
		queue int
		next  int
	}
	var mu sync.Mutex
	pos := map[string]*position{}
	col := newCollector(orderKeys * perKey)
	c, err := rocketmq.NewPushConsumer(consumer.WithGroupName("go_order_consumer"),
		consumer.WithNameServer([]string{ns}),
		consumer.WithConsumerOrder(true),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		fail("orderly consumer: %v", err)
		return
	}
	err = c.Subscribe(orderTopic, consumer.MessageSelector{Type: consumer.TAG, Expression: "*"},
		func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range msgs {
				body := string(m.Body)
				key, seq := "", -1
				if i := strings.IndexByte(body, ':'); i > 0 {
					key = body[:i]
					fmt.Sscanf(body[i+1:], "%d", &seq)
				}
				problem := ""
				p := pos[key]
				if p == nil {
					p = &position{queue: m.Queue.QueueId}
					pos[key] = p
				}
				if m.Queue.QueueId != p.queue {
					problem = fmt.Sprintf("%s came from queue %d, its key's earlier ones from %d",
						body, m.Queue.QueueId, p.queue)
				} else if seq != p.next {
					problem = fmt.Sprintf("%s came when %s:%d was next", body, key, p.next)
				}
				p.next = seq + 1
				col.add(body, problem)
			}
			return consumer.ConsumeSuccess, nil
		})
	if err == nil {
		err = c.Start()
	}
	if err != nil {
		fail("orderly consumer subscribe/start: %v", err)
		return
	}
	defer c.Shutdown()
	col.wait(90 * time.Second)
	col.mu.Lock()
	defer col.mu.Unlock()
	for _, b := range col.bad {
		fail("orderly consumer: %s", b)
	}
	mu.Lock()
	defer mu.Unlock()
	keys := make([]string, 0, len(pos))
	for k := range pos {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("orderly consumer: %s from queue %d, %d in order\n", k, pos[k].queue, pos[k].next)
	}
	for k := 0; k < orderKeys; k++ {
		for s := 0; s < perKey; s++ {
			body := fmt.Sprintf("order-%d:%d", k, s)
			if n := col.seen[body]; n != 1 {
				fail("orderly consumer got %s %d times, want once", body, n)
			}
		}
	}
}

func main() {
	ns := flag.String("ns", "127.0.0.1:9876", "NameServer address")
	flag.Parse()
	rlog.SetLogLevel("error")

	p, err := rocketmq.NewProducer(producer.WithNameServer([]string{*ns}),
		producer.WithGroupName("go_interop_producer"),
		producer.WithQueueSelector(producer.NewHashQueueSelector()),
		producer.WithRetry(2))
	if err == nil {
		err = p.Start()
	}
	if err != nil {
		fmt.Println("FAIL: producer start:", err)
		os.Exit(1)
	}
	produce(p)
	p.Shutdown()
	if len(failures) > 0 {
		fmt.Println("go interop: the producer failed, no consumer started")
		os.Exit(1)
	}
	fmt.Printf("producer: sent %d tagged and %d keyed messages\n", tagCount, orderKeys*perKey)

	consumeByTag(*ns)
	consumeInOrder(*ns)

	if len(failures) > 0 {
		fmt.Printf("go interop: %d check(s) failed\n", len(failures))
		os.Exit(1)
	}
	fmt.Println("go interop: all checks passed")
}
