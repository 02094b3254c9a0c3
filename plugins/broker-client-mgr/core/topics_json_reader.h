/* topics_json_reader.h — topics.json (Java's TopicConfigSerializeWrapper)
 * read in one pass straight into TopicConfig structs, without building a
 * jansson tree: at 100,000 topics (15 MB) the tree cost most of a restart's
 * CPU. Accepts any valid JSON (whitespace, escapes, key order, unknown
 * members, fastjson's bare integer keys) and refuses what jansson refused
 * (invalid UTF-8, \u0000, lone surrogates, integers beyond 64 bits, nesting
 * deeper than 2048), with the line and column of the fault. */
#ifndef BCM_TOPICS_JSON_READER_H
#define BCM_TOPICS_JSON_READER_H

#include "data_version.h"
#include "topic_table.h"

#include <stddef.h>

/* One topic of topicConfigTable: key is its key in the table, name its
 * topicName (the key when that is not a string), cfg as cfg_from_json made
 * it (Java's defaults for missing fields; cfg->attributes borrowed).
 * Non-zero stops the read. Every entry is passed in text order, also one
 * whose key repeats an earlier key (jansson kept only the last of those;
 * the table keeps configs by name, so this differs only when the two
 * entries' topicNames differ, which no writer produces). */
typedef int (*bcm_topics_json_fn)(void *ud, const char *key, const char *name,
                                  const bcm_topic_cfg *cfg);
/* Called when a later "topicConfigTable" member replaces an earlier one
 * (jansson kept the last of duplicate keys): drop what fn was given. */
typedef void (*bcm_topics_json_reset_fn)(void *ud);

/* Reads text[0..len). *dv_out is set from dataVersion's integer counter /
 * timestamp when present (left alone otherwise). 0, or -1 with err
 * ("line L column C: what"); fn may have been called before a failure. */
int bcm_topics_json_read(const char *text, size_t len, bcm_topics_json_fn fn,
                         bcm_topics_json_reset_fn reset, void *ud, bcm_data_version *dv_out,
                         char *err, size_t errlen);

/* One topics.journal record's JSON (topic_journal.h): {"dv":[counter,
 * timestamp],"put":{TopicConfig}} or {"dv":[...],"del":"name"}, read with
 * the same tokenizer (a jansson tree per record cost ~4 us: 0.4 s for a
 * journal of 100,000 creations). */
typedef struct bcm_journal_rec {
    bcm_data_version dv; /* the array's items; 0 for one not an integer */
    bool put;            /* a "put" member (of any type) was there */
    bool put_ok;         /* ... an object with a string topicName */
    char *name;          /* put_ok: its topicName; else del's name; malloc'd */
    bcm_topic_cfg cfg;   /* put_ok: the config (attributes owned) */
} bcm_journal_rec;

/* 0 when text is such a record: an object whose "dv" is an array of two
 * items and whose "put" is an object or "del" a string; -1 otherwise. */
int bcm_journal_rec_read(const char *text, size_t len, bcm_journal_rec *out);
void bcm_journal_rec_free(bcm_journal_rec *r);

#endif
