/*
 * model log — the console's event log: notes rendered for people, in a ring of
 * MODEL_LOG_LINES lines read oldest first as one array.
 *
 * Notes come in bursts: every node announces its policy and comes up at start, a failed
 * task cancels its whole subtree, a lost node is reported by each of its peers.  Similar
 * notes (same kind and subject) less than a second after the burst's latest fold into
 * its line, which is rewritten as the burst grows ("37 tasks cancelled on 5 nodes"), so
 * 8 nodes coming up across a second's boundary are one line, not two; only the first few
 * failures of a second get a line each.  Lines stay in time order whatever order the
 * nodes' notes arrive in (each node's stream is delayed differently).  Lines depend on
 * the notes alone, never on when the model was ticked, so a replay seek shows the same
 * log however it got there.
 *
 * Internal to tui/model.c: a struct model embeds one.  Pure, one thread.
 */
#ifndef JACKDAW_TUI_MODEL_LOG_H
#define JACKDAW_TUI_MODEL_LOG_H

#include <stdint.h>

#include "tui/model.h"

/* Bursts followed at once; a new kind of burst evicts the oldest. */
#define MODEL_LOG_BURSTS 8

struct model_log_burst {
    bool open;
    int64_t last_ns;             /* time of its latest note */
    uint8_t kind;
    int64_t key;                 /* status, peer, or a hash of the text */
    uint64_t line_seq;           /* its line, while still in the ring */
    struct wire_note first;
    uint64_t events;
    int64_t sum;                 /* of the notes' counts */
    uint32_t nodes;              /* distinct nodes */
    uint8_t *node_set;           /* owned bitmap by node id + 1 */
};

struct model_log {
    struct model_log_line *lines; /* owned; 2 x MODEL_LOG_LINES, the log is
                                     lines[start .. start + len) */
    uint32_t start, len;
    uint64_t seq0;               /* sequence number of lines[start] */
    struct model_log_burst bursts[MODEL_LOG_BURSTS];
    int64_t fail_bucket;         /* failures get lines of their own up to a limit a second */
    uint32_t fail_lines;
};

void model_log_init(struct model_log *l);
void model_log_fini(struct model_log *l);
void model_log_reset(struct model_log *l);
/* Logs a note (steal grants are left to the matrix, done task ends are not notes). */
void model_log_note(struct model_log *l, const struct wire_note *n);
/* A line of the model's own (not a note), at time t, about job (-1: the cluster): "all
 * 40 tasks ended …". */
void model_log_text(struct model_log *l, int64_t t, int64_t job, const char *body);
/* The job a note is about (its task's), or -1 for a node's or the cluster's. */
int64_t model_log_job_of(const struct wire_note *n);
/* The lines, oldest first; valid until the next call that changes l. */
const struct model_log_line *model_log_lines(const struct model_log *l, uint32_t *n);

#endif
