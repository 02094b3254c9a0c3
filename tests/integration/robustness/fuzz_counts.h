/* fuzz_counts.h — tallies for the fuzz summary (requests per code, answers
 * per response code, mutations used): a small sorted key→count table. Only
 * counts and prints; decides nothing. */
#ifndef FUZZ_COUNTS_H
#define FUZZ_COUNTS_H

#include <stddef.h>
#include <stdio.h>

typedef struct fuzz_count_entry {
    char key[48];
    unsigned long count;
} fuzz_count_entry;

typedef struct fuzz_counts {
    fuzz_count_entry *v;
    size_t n, cap;
} fuzz_counts;

void fuzz_counts_add(fuzz_counts *c, const char *key);
void fuzz_counts_add_int(fuzz_counts *c, long key);
unsigned long fuzz_counts_total(const fuzz_counts *c);
/* "title: key=count key=count ..." wrapped over lines, to `out`. */
void fuzz_counts_print(const fuzz_counts *c, const char *title, FILE *out);
void fuzz_counts_free(fuzz_counts *c);

#endif
