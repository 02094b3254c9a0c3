/* register_mode.h — rmqbench's REGISTER_BROKER mode: the cost of a broker
 * registration measured over the wire (frame out, answer back), first
 * registration against unchanged re-registrations, while an optional probe
 * connection measures route lookups. */
#ifndef RMQBENCH_REGISTER_MODE_H
#define RMQBENCH_REGISTER_MODE_H

#include <stdio.h>

#include "bench_options.h"

/* Runs the mode described by o->register_topics and friends; prints the
 * report (text or JSON) to out. 0 = every registration answered SUCCESS,
 * 1 = a failure (message on stderr). */
int rmq_bench_register_run(const rmq_bench_options *o, FILE *out);

#endif
