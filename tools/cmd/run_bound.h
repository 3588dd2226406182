/*
 * run_bound — the workload bound of a traced run (tools/cmd/run_bound.c), shared by the
 * report and compare commands.
 */
#ifndef JACKDAW_RUN_BOUND_H
#define JACKDAW_RUN_BOUND_H

#include "tools/report/analysis.h"

/* Finds the run's workload (`workload` when not NULL, else where the trace says, else
 * beside the trace), computes its bounds on the run's cluster and sets the binding one
 * on `a`.  Without a readable workload, or a bound, a note on stderr ("jackdaw WHO:
 * note: no bound: …") and `a` stays without one. */
void run_bound_add(struct report_analysis *a, const char *trace, const char *workload,
                   const char *who);

#endif
