/*
 * run_bound — the workload bound of a traced run (tools/cmd/run_bound.c), shared by the
 * report and compare commands, and the finding of a traced run's workload, which `sim
 * --from` shares too.
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

/* The workload the trace names (`recorded`: its JOB_SUBMIT's first name, as the client
 * was given it): as it stands, else next to the trace.  Malloc'd; NULL when neither is
 * readable (or recorded is NULL). */
char *run_find_workload(const char *trace, const char *recorded);

#endif
