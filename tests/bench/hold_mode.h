/* hold_mode.h — rmqbench --hold: open and keep many client connections (to
 * measure what each costs the server), optionally one request on each. */
#ifndef RMQBENCH_HOLD_MODE_H
#define RMQBENCH_HOLD_MODE_H

#include <stdio.h>

#include "bench_options.h"

/* 0 = every connection was opened (and answered), 1 = not all could be. */
int rmq_bench_hold_run(const rmq_bench_options *o, FILE *out);

#endif
