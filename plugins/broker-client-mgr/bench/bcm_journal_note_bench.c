/* bcm_journal_note_bench — CPU cost of writing topics.journal records (one
 * per creation: bcm_topic_journal_note) and of compacting topics.json
 * (bcm_topic_table_encode) at N topics (Scale-<i>, 4 queues, as
 * tests/bench/topics_scale.sh makes them; ATTRS=1 gives every topic a 5.x
 * message.type attribute), each the best of R rounds in CPU time of this
 * process. Built against the core library of the tree it sits in, so the
 * same source measures an older tree by linking that tree's library. Not a
 * test.
 *
 *   [ATTRS=1] bcm_journal_note_bench [N] [R]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topic_journal.h"
#include "topic_table.h"

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    const char *attrs_env = getenv("ATTRS");
    bool attrs = attrs_env && strcmp(attrs_env, "1") == 0;
    bcm_topic_table t;
    bcm_topic_table_init(&t, 1);
    char(*names)[32] = malloc((size_t)n * sizeof *names);
    if (!names)
        return 1;
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "Scale-%d", i);
        bcm_topic_cfg c = {.read_queue_nums = 4, .write_queue_nums = 4, .perm = 6};
        if (attrs)
            c.attributes = json_pack("{ss}", "message.type", "NORMAL");
        bcm_topic_table_put_cfg(&t, names[i], &c, 2);
        json_decref(c.attributes);
    }
    double best_note = 1e18, best_encode = 1e18;
    size_t bytes = 0, text_len = 0;
    for (int r = 0; r < rounds; r++) {
        char *buf = NULL;
        size_t len = 0, cap = 0;
        double t0 = cpu_ms();
        for (int i = 0; i < n; i++)
            if (bcm_topic_journal_note(&t, names[i], &buf, &len, &cap) != 0)
                return 1;
        double d = cpu_ms() - t0;
        best_note = d < best_note ? d : best_note;
        bytes = len;
        free(buf);
        t0 = cpu_ms();
        char *text = bcm_topic_table_encode(&t);
        d = cpu_ms() - t0;
        best_encode = d < best_encode ? d : best_encode;
        text_len = text ? strlen(text) : 0;
        free(text);
    }
    printf("%d topics%s: journal record %.3f us each (%zu bytes in all); topics.json "
           "compaction %.1f ms (%zu bytes)\n",
           n, attrs ? " with attributes" : "", best_note * 1e3 / n, bytes, best_encode, text_len);
    bcm_topic_table_free(&t);
    free(names);
    return 0;
}
