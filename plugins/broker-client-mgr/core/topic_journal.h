/* topic_journal.h — topics.journal: the topic changes made since topics.json
 * was last written, one record per change, appended and synced in groups so
 * a creation costs an append instead of a rewrite of the whole table.
 *
 * A record is one line: 8 hex digits of the CRC-32 of the JSON that follows,
 * a space, the JSON, '\n'. The JSON is {"dv":[counter,timestamp],"put":
 * {TopicConfig}} or {"dv":[...],"del":"name"}: the table's DataVersion just
 * after the change, and the change. Replay skips records whose counter is
 * not above the loaded topics.json's (a compaction wrote them already) and
 * stops at the first damaged or unterminated record (a torn tail). Java
 * never reads this file: topics.json is rewritten from the table (compacted)
 * when the journal grows past a bound and at a clean stop. */
#ifndef BCM_TOPIC_JOURNAL_H
#define BCM_TOPIC_JOURNAL_H

#include "topic_table.h"

#include <stddef.h>

/* A record of `name`'s current state in t (a put when present, else a del)
 * at t's DataVersion, appended to *buf (realloc'd; *len and *cap updated).
 * 0, or -1 when out of memory (buf unchanged). */
int bcm_topic_journal_note(const bcm_topic_table *t, const char *name, char **buf, size_t *len,
                           size_t *cap);

typedef struct bcm_journal_replay {
    size_t valid_len; /* bytes of whole, intact records: the file is cut here */
    size_t records;   /* intact records read */
    size_t applied;   /* ... of which newer than the table and applied */
    bool torn;        /* something followed valid_len */
} bcm_journal_replay;

/* Apply the records of `text` newer than t's DataVersion to t (in order);
 * t's DataVersion becomes the last applied record's. */
void bcm_topic_journal_replay(bcm_topic_table *t, const char *text, size_t len,
                              bcm_journal_replay *out);

#endif
