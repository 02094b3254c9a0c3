/* bcm_topics_load_bench — CPU cost of loading a topics.json of N topics
 * (Scale-<i>, 4 queues, as tests/bench/topics_scale.sh makes them) the way
 * a restart does (bcm_topic_table_load: the one-pass reader) and the way it
 * did before (a jansson tree of the whole text, then one struct per topic),
 * each the best of R rounds in CPU time of this process; and the replay of
 * a topics.journal of N creations (what a restart after kill -9 reads when
 * the journal was about to be compacted). Not a test.
 *
 *   bcm_topics_load_bench [N] [R]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fastjson_text.h"
#include "topic_journal.h"
#include "topic_table.h"

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void jansson_load(bcm_topic_table *t, const char *text, size_t len)
{
    char err[256];
    json_t *root = fastjson_load_object(text, len, err, sizeof err);
    if (!root) {
        fprintf(stderr, "jansson: %s\n", err);
        exit(1);
    }
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(root, "topicConfigTable"), k, v)
        bcm_topic_table_put(t, json_incref(v), 0);
    json_decref(root);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    bcm_topic_table src;
    bcm_topic_table_init(&src, 1);
    char name[64];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "Scale-%d", i);
        bcm_topic_table_create_if_absent(&src, name, 4, 6, 0, 1);
    }
    char *text = bcm_topic_table_encode(&src);
    size_t len = strlen(text);
    bcm_topic_table_free(&src);
    /* the journal: the same creations, one record each */
    char *jbuf = NULL;
    size_t jlen = 0, jcap = 0;
    bcm_topic_table_init(&src, 1);
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "Scale-%d", i);
        bcm_topic_table_create_if_absent(&src, name, 4, 6, 0, 1);
        bcm_topic_journal_note(&src, name, &jbuf, &jlen, &jcap);
    }
    bcm_topic_table_free(&src);
    double best_journal = 1e18;
    double best_reader = 1e18, best_jansson = 1e18;
    for (int r = 0; r < rounds; r++) {
        bcm_topic_table t;
        bcm_topic_table_init(&t, 1);
        char err[256];
        double t0 = cpu_ms();
        if (bcm_topic_table_load(&t, text, len, err, sizeof err) != 0) {
            fprintf(stderr, "reader: %s\n", err);
            return 1;
        }
        double t1 = cpu_ms();
        if (bcm_topic_table_size(&t) != (size_t)n)
            return 1;
        bcm_topic_table_free(&t);
        bcm_topic_table_init(&t, 1);
        double t2 = cpu_ms();
        jansson_load(&t, text, len);
        double t3 = cpu_ms();
        bcm_topic_table_free(&t);
        bcm_topic_table_init(&t, 1);
        bcm_journal_replay jr;
        double t4 = cpu_ms();
        bcm_topic_journal_replay(&t, jbuf, jlen, &jr);
        double t5 = cpu_ms();
        if (jr.applied != (size_t)n)
            return 1;
        bcm_topic_table_free(&t);
        if (t5 - t4 < best_journal)
            best_journal = t5 - t4;
        if (t1 - t0 < best_reader)
            best_reader = t1 - t0;
        if (t3 - t2 < best_jansson)
            best_jansson = t3 - t2;
    }
    printf("%d topics, topics.json %.1f MB: one-pass reader %.0f ms, jansson tree %.0f ms; "
           "topics.journal of %d creations (%.1f MB) replayed in %.0f ms (CPU, best of %d)\n",
           n, (double)len / 1e6, best_reader, best_jansson, n, (double)jlen / 1e6, best_journal,
           rounds);
    free(text);
    free(jbuf);
    return 0;
}
