/*
 * What the file pass (analysis.c) hands to the time sweep (sweep.c): the task table and
 * the state changes in file order.  Private to tools/report/analysis*.
 */
#ifndef JACKDAW_REPORT_ANALYSIS_INTERNAL_H
#define JACKDAW_REPORT_ANALYSIS_INTERNAL_H

#include <stdint.h>

#include "tools/report/analysis.h"

/* A node index must fit a sweep record. */
#define SWEEP_MAX_NODES 65535

#define NO_TIME INT64_MIN

struct rtask {
    uint64_t key;
    int64_t submit_ns;  /* earliest TASK_SUBMIT, NO_TIME without one */
    int64_t start_ns;   /* latest TASK_START, NO_TIME without one */
    uint32_t name_off;  /* into the names arena; 0 when unnamed */
    int32_t start_node; /* node index of the latest START, -1 */
    /* Sweep state. */
    int32_t qnode;      /* node index whose queue holds it, -1 */
    int32_t run_node;   /* node index running it, -1 */
    uint8_t qshared;    /* 1: SReadyQ, 0: LReadyQ */
    uint8_t ended;      /* an END was seen */
    /* Attempts (the pass only). */
    uint32_t attempt;     /* highest seen */
    uint32_t end_attempt; /* of the END counted */
    uint8_t end_status;   /* of the END counted (enum task_status; 255 out of range) */
    int64_t end_ns;       /* of the END counted, NO_TIME */
    int64_t restart_ns;   /* earliest START of an attempt above 0, NO_TIME */
};

enum sweep_kind {
    SW_QUEUED_LOCAL,
    SW_QUEUED_SHARED, /* TASK_QUEUED_SHARED and TASK_STOLEN_IN */
    SW_STOLEN_OUT,
    SW_PUSHED,
    SW_START,
    SW_END,
    SW_FETCH_BEGIN,
    SW_FETCH_END,
    SW_STEAL_ASK,
    SW_STEAL_ANSWER,
    SW_FAIL_BEGIN,    /* node: the node that died; its recovery window opens */
    SW_FAIL_END,      /* the window of that node closes */
    SW_LOST_BEGIN,    /* a slot of node runs an attempt already known lost */
    SW_LOST_END,
};

/* 16 bytes: a 10^6-task trace makes about 3.5 million of them. */
struct sweep_rec {
    int64_t t;      /* ns since the run start, >= 0 */
    uint32_t task;  /* index into the task table; for SW_STOLEN_OUT into the steal table;
                       unused for fetches and steal requests */
    uint16_t node;  /* node index */
    uint16_t kind;  /* enum sweep_kind */
};

/* One TASK_STOLEN_OUT: the record has no room for the thief. */
struct steal_out {
    uint32_t task;  /* index into the task table */
    int32_t thief;  /* node index, -1 when unknown */
};

/* Per node, filled by the pass for the sweep. */
struct pass_node {
    int64_t first_start_ns, last_start_ns, last_end_ns; /* NO_TIME when none */
    uint64_t starts;
    uint64_t runs;      /* tasks that ended after starting here */
    int64_t run_ns;     /* their total length */
    int64_t down_ns;    /* earliest NODE_DOWN about it from any node, NO_TIME */
    uint8_t declared;   /* some node declared it dead (NODE_DOWN, status 1) */
};

struct sweep_input {
    struct rtask *tasks;
    size_t ntasks;
    struct sweep_rec *recs; /* in file order; the sweep sorts them (stable, by time) */
    size_t nrecs;
    struct steal_out *steals; /* SW_STOLEN_OUT records point here */
    size_t nsteals;
    struct pass_node *pn;   /* nnodes entries */
    int64_t t0, t1;         /* the window, ns */
};

/* A node sample, kept for the queue series. */
struct sample_rec {
    int64_t t;
    uint32_t node; /* node index */
    int32_t waitq, lreadyq, sreadyq;
};

/* What the run header says (header.c).  Strings owned, NULL when absent; nodes owned,
 * slots 0 and speed 0 when the header does not give them. */
struct header_node {
    int32_t id;
    int32_t slots;
    double speed;
};

struct run_header {
    char *run_id, *workload_name, *workload_digest;
    char *placement, *steal_policy; /* the values of --placement and --steal in
                                       config.node_args */
    struct header_node *nodes;
    size_t nnodes;
};

/* Parses the header JSON (NULL: none); *problem gets an owned sentence when it is
 * missing or unreadable (the figures then come from the events alone). */
void run_header_parse(struct run_header *h, const char *json, char **problem);
void run_header_fini(struct run_header *h);

/* The queue series of a->bins from the samples (sorted here): per bin and node, the
 * mean of the node's samples in the bin, else its last one before; summed over nodes. */
void report_bin_samples(struct report_analysis *a, struct sample_rec *samples, size_t n,
                        int64_t t0);

/* Sorts the records, sweeps them, and fills a's lost_s, bins (utilization, E_b),
 * node_utilization and the steal audit.  a->nnodes, nodes[].slots and a->nbins are set. */
void report_sweep(struct report_analysis *a, struct sweep_input *in);

#endif
