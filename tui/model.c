/*
 * model — see model.h.
 *
 * The view must not depend on how often it was ticked: replay seeking forward in many
 * small steps has to show what one direct seek shows.  So nothing that depends on the
 * clock is sampled at model_tick alone.  History points are recorded when time crosses a
 * step boundary, whether the crossing is seen by a sample (the boundaries strictly
 * before its time, with the state it replaces) or by a tick (the boundaries up to now);
 * the log is written as notes arrive, bursts of similar notes folding into one line that
 * is rewritten in place; recent steals expire by their own times.
 *
 * Counters in samples are cumulative since the node started, but a console may attach
 * an hour into a run.  Rates and efficiency are therefore measured from each node's
 * first sample (its baseline), while totals (done, failed) are absolute.
 *
 * "Done" needs the notes: a node's `ended` counts every end (done, failed, cancelled)
 * and `failed` only FAILED, so cancellations, which only notes report, are subtracted.
 * A cancellation is counted against a node's sample once a sample at or after its time
 * has arrived; until then it is pending, so that done never dips between the note and
 * the sample that includes it.
 */
#include "tui/model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/base/u64map.h"
#include "core/base/xalloc.h"
#include "core/model/task.h"
#include "tui/model_jobs.h"
#include "tui/model_log.h"

/* Times beyond this are garbage; refusing them keeps step arithmetic from overflowing. */
#define TIME_LIMIT (INT64_C(1) << 62)
/* Rate points: one per history step, enough to span MODEL_RATE_WINDOW_NS and then some. */
#define RATE_POINTS 16
/* Above this many nodes the thief x victim matrix would not fit a screen: flows only. */
#define MATRIX_MAX_NODES 64

struct header_node {
    int32_t id;
    uint32_t slots;
    double speed;
};

/* What the model keeps per node beyond the public struct model_node. */
struct node_extra {
    bool has_base;               /* the baseline below is set (first sample seen) */
    int64_t t0, busy_ns0, ended0;
    uint64_t cancelled_seen;     /* all cancellation notes */
    uint64_t cancelled_counted;  /* those at or before the node's latest sample */
    int64_t *pending;            /* owned ring: times of the others, oldest first */
    size_t pending_head, pending_len, pending_cap;
    char policy[TRACE_TEXT_MAX]; /* latest POLICY_CHANGE; "" before any */
};

struct grant {
    int64_t time_ns;
    int32_t thief, victim;
    int64_t tasks;
};

struct pair_count {
    uint64_t tasks;
};

struct rate_point {
    int64_t time_ns;
    int64_t ended; /* sum over nodes, at time_ns */
};

struct job {
    uint64_t id;
    uint64_t tasks;
};

struct model {
    /* The header survives model_reset. */
    char run_id[64];
    char header_workload[128];
    struct header_node *hnodes; /* owned; nhnodes */
    uint32_t nhnodes;

    struct model_node *nodes;   /* owned; nnodes, sorted by id */
    struct node_extra *extra;   /* owned; parallel to nodes */
    uint32_t nnodes, cap_nodes;
    int32_t *index_of;          /* owned; node id -> index in nodes, -1 when absent */
    uint32_t index_cap;

    bool any_input;
    uint64_t inputs;
    int64_t step_next;          /* the next history boundary to record */
    struct rate_point rate[RATE_POINTS]; /* ring, rate_head the oldest */
    uint32_t rate_head, rate_len;

    struct job *jobs;           /* owned; njobs */
    size_t njobs, cap_jobs;
    uint64_t total;             /* tasks of every JOB_SUBMIT seen */
    char job_workload[128];     /* the first JOB_SUBMIT's text */
    int64_t job_ns;             /* the first JOB_SUBMIT's time; INT64_MIN before one */
    int64_t end_ns;             /* when every submitted task had ended; INT64_MAX before */

    struct grant *grants;       /* owned ring of recent steal grants, oldest first */
    size_t grant_head, grant_len, grant_cap;
    struct u64map pairs;        /* thief << 32 | victim -> owned struct pair_count */
    struct u64map all_pairs;    /* the same over the whole run (never expired) */
    bool whole;                 /* the matrix shows all_pairs (model_steals_whole) */
    uint32_t *recent;           /* owned; recent_n^2, NULL when nnodes > MATRIX_MAX_NODES */
    uint32_t recent_n;
    struct model_flow flows[MODEL_MAX_FLOWS];

    struct model_log log;
    struct model_jobs tallies;  /* per-job figures (model_jobs) */
    int64_t selected_job;       /* -1: all; survives model_reset */
    struct model_view view;
};

static uint64_t nonneg(int64_t v)
{
    return v > 0 ? (uint64_t)v : 0;
}

/* ---- histories --------------------------------------------------------------------- */

float model_hist_get(const struct model_hist *h, uint32_t i)
{
    if (!h || i >= h->len)
        return 0.0f;
    return h->v[(h->head + i) % MODEL_HISTORY];
}

static void hist_push(struct model_hist *h, float v)
{
    if (h->len < MODEL_HISTORY) {
        h->v[(h->head + h->len) % MODEL_HISTORY] = v;
        h->len++;
    } else {
        h->v[h->head] = v;
        h->head = (h->head + 1) % MODEL_HISTORY;
    }
}

/* ---- nodes ------------------------------------------------------------------------- */

static void node_extra_fini(struct node_extra *x)
{
    free(x->pending);
}

static void index_rebuild(struct model *m)
{
    for (uint32_t i = 0; i < m->index_cap; i++)
        m->index_of[i] = -1;
    for (uint32_t i = 0; i < m->nnodes; i++)
        m->index_of[m->nodes[i].id] = (int32_t)i;
}

static struct model_node *node_find(struct model *m, int32_t id)
{
    if (id < 0 || (uint32_t)id >= m->index_cap || m->index_of[id] < 0)
        return NULL;
    return &m->nodes[m->index_of[id]];
}

static struct node_extra *extra_of(struct model *m, const struct model_node *n)
{
    return &m->extra[n - m->nodes];
}

static void matrix_rebuild(struct model *m);

/* The node with this id, created (sorted into place) when absent; NULL for an id out of
 * bounds.  A new node's histories are padded to the cluster's length so that every
 * history lines up with the others, newest last. */
static struct model_node *node_get(struct model *m, int32_t id)
{
    if (id < 0 || id > MODEL_MAX_NODE_ID)
        return NULL;
    struct model_node *found = node_find(m, id);
    if (found)
        return found;
    if ((uint32_t)id >= m->index_cap) {
        uint32_t cap = m->index_cap ? m->index_cap : 64;
        while (cap <= (uint32_t)id)
            cap *= 2;
        m->index_of = xrealloc(m->index_of, cap * sizeof *m->index_of);
        for (uint32_t i = m->index_cap; i < cap; i++)
            m->index_of[i] = -1;
        m->index_cap = cap;
    }
    if (m->nnodes == m->cap_nodes) {
        size_t cap = m->cap_nodes;
        m->nodes = xgrow(m->nodes, &cap, m->nnodes + 1, sizeof *m->nodes);
        m->extra = xrealloc(m->extra, cap * sizeof *m->extra);
        m->cap_nodes = (uint32_t)cap;
    }
    /* Ids mostly come in order (header, then samples), so this is an append. */
    uint32_t at = m->nnodes;
    while (at > 0 && m->nodes[at - 1].id > id)
        at--;
    memmove(&m->nodes[at + 1], &m->nodes[at], (m->nnodes - at) * sizeof *m->nodes);
    memmove(&m->extra[at + 1], &m->extra[at], (m->nnodes - at) * sizeof *m->extra);
    m->nnodes++;
    for (uint32_t i = at; i < m->nnodes; i++)
        m->index_of[i == at ? id : m->nodes[i].id] = (int32_t)i;
    struct model_node *n = &m->nodes[at];
    memset(n, 0, sizeof *n);
    memset(&m->extra[at], 0, sizeof m->extra[at]);
    n->id = id;
    n->speed = 1.0;
    n->cache_hit_rate = -1.0;
    for (uint32_t i = 0; i < m->view.util_hist.len; i++) {
        hist_push(&n->util_hist, 0.0f);
        hist_push(&n->waitq_hist, 0.0f);
        hist_push(&n->lreadyq_hist, 0.0f);
        hist_push(&n->sreadyq_hist, 0.0f);
    }
    m->view.nodes = m->nodes;
    m->view.nnodes = m->nnodes;
    /* The matrix must match nnodes before anyone reads the view again (and indexes may
     * have moved); past its bound it is gone and flows do not depend on indexes. */
    if (m->nnodes <= MATRIX_MAX_NODES + 1)
        matrix_rebuild(m);
    return n;
}

static void apply_header_nodes(struct model *m)
{
    for (uint32_t i = 0; i < m->nhnodes; i++) {
        const struct header_node *h = &m->hnodes[i];
        struct model_node *n = node_get(m, h->id);
        if (!n)
            continue;
        n->speed = h->speed;
        if (!n->seen)
            n->slots = h->slots;
    }
}

/* Derived values of one node that depend on its own samples only. */
static void node_derive(struct model *m, struct model_node *n)
{
    const struct node_extra *x = extra_of(m, n);
    n->util = n->slots ? (double)nonneg(n->s.busy) / n->slots : 0.0;
    double span = (double)(n->time_ns - x->t0) * n->slots;
    n->util_avg = x->has_base && span > 0 ? (double)(n->s.busy_ns - x->busy_ns0) / span : 0.0;
    if (n->util_avg < 0)
        n->util_avg = 0;
    uint64_t hits = nonneg(n->s.cache_hits), fetches = nonneg(n->s.fetches);
    n->cache_hit_rate = hits + fetches ? (double)hits / (double)(hits + fetches) : -1.0;
    uint64_t ended = nonneg(n->s.ended), gone = nonneg(n->s.failed) + x->cancelled_counted;
    n->done = ended > gone ? ended - gone : 0;
    n->cancelled = x->cancelled_counted;
}

/* ---- time steps -------------------------------------------------------------------- */

static void rate_push(struct model *m, int64_t t, int64_t ended)
{
    struct rate_point *p;
    if (m->rate_len < RATE_POINTS) {
        p = &m->rate[(m->rate_head + m->rate_len++) % RATE_POINTS];
    } else {
        p = &m->rate[m->rate_head];
        m->rate_head = (m->rate_head + 1) % RATE_POINTS;
    }
    *p = (struct rate_point){.time_ns = t, .ended = ended};
}

/* Records the boundaries up to t (inclusive, or strictly before t) with the state as it
 * stands: nothing changed between them, so each crossed step gets the same value. */
static void record_steps(struct model *m, int64_t t, bool inclusive)
{
    if (!m->any_input)
        return;
    if (inclusive ? t < m->step_next : t <= m->step_next)
        return;
    uint64_t span = (uint64_t)t - (uint64_t)m->step_next - (inclusive ? 0 : 1);
    uint64_t steps = span / (uint64_t)MODEL_HISTORY_STEP_NS + 1;
    int64_t last = m->step_next + (int64_t)(steps - 1) * MODEL_HISTORY_STEP_NS;

    uint64_t busy = 0, slots = 0;
    int64_t ended = 0;
    for (uint32_t i = 0; i < m->nnodes; i++) {
        busy += nonneg(m->nodes[i].s.busy);
        slots += m->nodes[i].slots;
        ended += (int64_t)nonneg(m->nodes[i].s.ended);
    }
    float util = slots ? (float)((double)busy / (double)slots) : 0.0f;
    uint64_t pushes = steps < MODEL_HISTORY ? steps : MODEL_HISTORY;
    for (uint64_t k = 0; k < pushes; k++)
        hist_push(&m->view.util_hist, util);
    for (uint32_t i = 0; i < m->nnodes; i++) {
        struct model_node *n = &m->nodes[i];
        float u = n->slots ? (float)((double)nonneg(n->s.busy) / n->slots) : 0.0f;
        for (uint64_t k = 0; k < pushes; k++) {
            hist_push(&n->util_hist, u);
            hist_push(&n->waitq_hist, (float)nonneg(n->s.waitq));
            hist_push(&n->lreadyq_hist, (float)nonneg(n->s.lreadyq));
            hist_push(&n->sreadyq_hist, (float)nonneg(n->s.sreadyq));
        }
    }
    uint64_t rates = steps < RATE_POINTS ? steps : RATE_POINTS;
    for (uint64_t k = rates; k > 0; k--)
        rate_push(m, last - (int64_t)(k - 1) * MODEL_HISTORY_STEP_NS, ended);
    m->step_next = last + MODEL_HISTORY_STEP_NS;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static void first_input(struct model *m, int64_t t)
{
    m->inputs++;
    if (!m->any_input) {
        m->any_input = true;
        m->view.first_ns = t;
        m->step_next = (floor_div(t, MODEL_HISTORY_STEP_NS) + 1) * MODEL_HISTORY_STEP_NS;
    } else if (t < m->view.first_ns) {
        m->view.first_ns = t;
    }
    m->view.inputs = m->inputs;
}

/* ---- steals ------------------------------------------------------------------------ */

static uint64_t pair_key(int32_t thief, int32_t victim)
{
    return (uint64_t)(uint32_t)thief << 32 | (uint32_t)victim;
}

static void grant_expire(struct model *m, int64_t before)
{
    while (m->grant_len && m->grants[m->grant_head].time_ns <= before) {
        const struct grant *g = &m->grants[m->grant_head];
        uint64_t key = pair_key(g->thief, g->victim);
        struct pair_count *p = u64map_get(&m->pairs, key);
        if (p) {
            p->tasks -= p->tasks < (uint64_t)g->tasks ? p->tasks : (uint64_t)g->tasks;
            if (!p->tasks)
                free(u64map_del(&m->pairs, key));
        }
        m->grant_head = (m->grant_head + 1) % m->grant_cap;
        m->grant_len--;
    }
}

static void grant_add(struct model *m, const struct wire_note *n)
{
    /* Grants arrive about in time order, so the window can be trimmed here too: a trace
     * fed without ticks keeps no more than a window's worth. */
    if (n->time_ns > INT64_MIN + MODEL_STEAL_WINDOW_NS)
        grant_expire(m, n->time_ns - MODEL_STEAL_WINDOW_NS);
    if (m->grant_len == m->grant_cap) {
        size_t cap = m->grant_cap ? 2 * m->grant_cap : 256;
        struct grant *g = xmalloc(cap * sizeof *g);
        for (size_t i = 0; i < m->grant_len; i++)
            g[i] = m->grants[(m->grant_head + i) % m->grant_cap];
        free(m->grants);
        m->grants = g;
        m->grant_cap = cap;
        m->grant_head = 0;
    }
    m->grants[(m->grant_head + m->grant_len++) % m->grant_cap] = (struct grant){
        .time_ns = n->time_ns, .thief = n->node, .victim = n->peer, .tasks = n->count};
    uint64_t key = pair_key(n->node, n->peer);
    struct u64map *maps[2] = {&m->pairs, &m->all_pairs};
    for (int k = 0; k < 2; k++) {
        struct pair_count *p = u64map_get(maps[k], key);
        if (!p) {
            p = xcalloc(1, sizeof *p);
            u64map_put(maps[k], key, p);
        }
        p->tasks += (uint64_t)n->count;
    }
}

static int flow_cmp(const struct model_flow *a, const struct model_flow *b)
{
    if (a->tasks != b->tasks)
        return a->tasks > b->tasks ? -1 : 1;
    if (a->thief != b->thief)
        return a->thief < b->thief ? -1 : 1;
    return (a->victim > b->victim) - (a->victim < b->victim);
}

/* The matrix and the largest flows, from the pair counts.  Flows are kept sorted by
 * insertion into a short array, which beats sorting every pair of a large cluster. */
static void matrix_rebuild(struct model *m)
{
    uint32_t n = m->nnodes <= MATRIX_MAX_NODES ? m->nnodes : 0;
    if (n != m->recent_n) {
        free(m->recent);
        m->recent = n ? xcalloc((size_t)n * n, sizeof *m->recent) : NULL;
        m->recent_n = n;
    } else if (n) {
        memset(m->recent, 0, (size_t)n * n * sizeof *m->recent);
    }
    uint32_t nflows = 0;
    uint64_t key;
    void *value;
    struct u64map *pairs = m->whole ? &m->all_pairs : &m->pairs;
    for (size_t pos = 0; (pos = u64map_next(pairs, pos, &key, &value)) != 0;) {
        const struct pair_count *p = value;
        struct model_flow f = {.thief = (int32_t)(key >> 32), .victim = (int32_t)(uint32_t)key,
                               .tasks = p->tasks};
        if (n) {
            const struct model_node *t = node_find(m, f.thief), *v = node_find(m, f.victim);
            if (t && v) {
                uint32_t *cell = &m->recent[(size_t)(t - m->nodes) * n + (size_t)(v - m->nodes)];
                *cell = f.tasks > UINT32_MAX - *cell ? UINT32_MAX : *cell + (uint32_t)f.tasks;
            }
        }
        if (nflows == MODEL_MAX_FLOWS && flow_cmp(&f, &m->flows[nflows - 1]) >= 0)
            continue;
        uint32_t at = nflows < MODEL_MAX_FLOWS ? nflows++ : nflows - 1;
        while (at > 0 && flow_cmp(&f, &m->flows[at - 1]) < 0) {
            m->flows[at] = m->flows[at - 1];
            at--;
        }
        m->flows[at] = f;
    }
    m->view.recent = m->recent;
    m->view.flows = m->flows;
    m->view.nflows = nflows;
    m->view.steals_whole = m->whole;
}

void model_steals_whole(struct model *m, bool whole)
{
    m->whole = whole;
    matrix_rebuild(m);
}

/* ---- inputs ------------------------------------------------------------------------ */

static void cancel_pending_push(struct node_extra *x, int64_t t)
{
    if (x->pending_len == x->pending_cap) {
        size_t cap = x->pending_cap ? 2 * x->pending_cap : 16;
        int64_t *p = xmalloc(cap * sizeof *p);
        for (size_t i = 0; i < x->pending_len; i++)
            p[i] = x->pending[(x->pending_head + i) % x->pending_cap];
        free(x->pending);
        x->pending = p;
        x->pending_cap = cap;
        x->pending_head = 0;
    }
    x->pending[(x->pending_head + x->pending_len++) % x->pending_cap] = t;
}

static void cancel_pending_settle(struct node_extra *x, int64_t sample_ns)
{
    while (x->pending_len && x->pending[x->pending_head] <= sample_ns) {
        x->cancelled_counted++;
        x->pending_head = (x->pending_head + 1) % x->pending_cap;
        x->pending_len--;
    }
}

void model_sample(struct model *m, int32_t node, int64_t time_ns, const struct trace_sample *s,
                  bool connected)
{
    if (!m || !s || time_ns < -TIME_LIMIT || time_ns > TIME_LIMIT)
        return;
    struct model_node *n = node_get(m, node);
    if (!n)
        return;
    first_input(m, time_ns);
    record_steps(m, time_ns, false);
    struct node_extra *x = extra_of(m, n);
    if (!x->has_base) {
        x->has_base = true;
        x->t0 = time_ns;
        x->busy_ns0 = s->busy_ns;
        x->ended0 = s->ended;
    }
    n->s = *s;
    n->time_ns = time_ns;
    n->seen = true;
    n->connected = connected;
    n->slots = (uint32_t)nonneg(s->slots);
    cancel_pending_settle(x, time_ns);
    node_derive(m, n);
}

static void add_job(struct model *m, const struct wire_note *n)
{
    uint64_t id = n->task >> 32;
    uint64_t tasks = nonneg(n->count);
    for (size_t i = 0; i < m->njobs; i++) {
        if (m->jobs[i].id == id) {
            /* The same job announced again (a resent message): it is not more work. */
            m->total -= m->jobs[i].tasks;
            m->jobs[i].tasks = tasks;
            m->total += tasks;
            return;
        }
    }
    m->jobs = xgrow(m->jobs, &m->cap_jobs, m->njobs + 1, sizeof *m->jobs);
    m->jobs[m->njobs++] = (struct job){.id = id, .tasks = tasks};
    m->total += tasks;
    if (!m->job_workload[0] && n->text[0]) {
        size_t len = strnlen(n->text, sizeof n->text - 1);
        if (len >= sizeof m->job_workload)
            len = sizeof m->job_workload - 1;
        memcpy(m->job_workload, n->text, len);
        m->job_workload[len] = '\0';
        if (!m->header_workload[0])
            snprintf(m->view.workload, sizeof m->view.workload, "%s", m->job_workload);
    }
}

void model_note(struct model *m, const struct wire_note *note)
{
    if (!m || !note || note->node < -1 || note->node > MODEL_MAX_NODE_ID ||
        note->time_ns < -TIME_LIMIT || note->time_ns > TIME_LIMIT)
        return;
    struct model_node *n = note->node >= 0 ? node_get(m, note->node) : NULL;
    first_input(m, note->time_ns);
    switch (note->kind) {
    case TRACE_TASK_END:
        if (note->status == TASK_DONE)
            return; /* not a note: done tasks are counted by samples */
        if (n && note->status == TASK_CANCELLED) {
            struct node_extra *x = extra_of(m, n);
            x->cancelled_seen++;
            if (n->seen && note->time_ns <= n->time_ns)
                x->cancelled_counted++;
            else
                cancel_pending_push(x, note->time_ns);
            node_derive(m, n);
        }
        break;
    case TRACE_STEAL_GRANT:
        if (!n || note->peer < 0 || note->peer > MODEL_MAX_NODE_ID || note->count <= 0)
            return;
        node_get(m, note->peer);
        /* Creating the victim may have moved the array: look both up again. */
        node_find(m, note->node)->steals_in += (uint64_t)note->count;
        node_find(m, note->peer)->steals_out += (uint64_t)note->count;
        grant_add(m, note);
        return; /* the matrix shows them; logging each would drown the log */
    case TRACE_NODE_UP:
        if (n) {
            n->connected = true;
            if (note->peer < 0 || note->peer == note->node)
                n->dead = false; /* itself, starting: a new member */
            if (!n->seen && note->count > 0 && note->count <= UINT32_MAX)
                n->slots = (uint32_t)note->count;
        }
        break;
    case TRACE_NODE_DOWN:
        if (n && note->peer < 0)
            n->connected = false;
        /* Declared dead by a peer: it is down, whether or not it said goodbye. */
        if (note->peer >= 0 && note->peer <= MODEL_MAX_NODE_ID &&
            note->status == TRACE_DOWN_DECLARED) {
            struct model_node *d = node_get(m, note->peer);
            if (d) {
                d->connected = false;
                d->dead = true;
            }
        }
        break;
    case TRACE_TASK_RESUBMIT:
        if (note->count < 0 || note->count > MODEL_MAX_NODE_ID || note->peer < 0 ||
            note->peer > MODEL_MAX_NODE_ID)
            return; /* garbage: not a resubmission this model can place */
        node_get(m, (int32_t)note->count);
        node_get(m, note->peer);
        /* Creating one may have moved the array: look both up again. */
        node_find(m, (int32_t)note->count)->resubmitted_from++;
        node_find(m, note->peer)->resubmitted_to++;
        m->view.resubmitted++;
        break;
    case TRACE_OBJECT_RECOMPUTE:
        m->view.recomputed++;
        break;
    case TRACE_TASK_RETRY:
        break; /* a log line only: the task is still the job's, counted when it ends */
    case TRACE_POLICY_CHANGE:
        if (n) {
            struct node_extra *x = extra_of(m, n);
            size_t len = strnlen(note->text, sizeof note->text - 1);
            memcpy(x->policy, note->text, len);
            x->policy[len] = '\0';
        }
        break;
    case TRACE_DROPPED:
        break;
    case TRACE_JOB_SUBMIT:
        add_job(m, note);
        if (m->job_ns == INT64_MIN || note->time_ns < m->job_ns)
            m->job_ns = note->time_ns;
        m->end_ns = INT64_MAX; /* a new job: not finished any more */
        break;
    default:
        return;
    }
    model_log_note(&m->log, note);
    m->view.log = model_log_lines(&m->log, &m->view.nlog);
}

/* ---- jobs -------------------------------------------------------------------------- */

void model_jobs(struct model *m, const struct wire_job_tally *jobs, uint32_t n, bool partial)
{
    /* Not counted in inputs: a tally replaces the last one rather than adding to it, so
     * feeding it at every replay seek keeps "each item fed once" true. */
    if (!m || (n && !jobs))
        return;
    model_jobs_set(&m->tallies, &m->log, jobs, n);
    m->view.jobs_partial = partial;
    m->view.jobs = m->tallies.jobs;
    m->view.njobs = m->tallies.njobs;
    m->view.log = model_log_lines(&m->log, &m->view.nlog);
}

void model_select_job(struct model *m, int64_t job)
{
    if (!m)
        return;
    m->selected_job = job < 0 || job > UINT32_MAX ? -1 : job;
    /* The view is re-derived at the same time: nothing but the choice changes. */
    if (m->any_input)
        model_tick(m, m->view.now_ns);
}

int64_t model_next_job(const struct model *m, int64_t job)
{
    if (!m || !m->tallies.njobs)
        return -1;
    if (job < 0)
        return m->tallies.jobs[0].id;
    for (uint32_t i = 0; i + 1 < m->tallies.njobs; i++)
        if (m->tallies.jobs[i].id == job)
            return m->tallies.jobs[i + 1].id;
    return -1;
}

static void copy_string(char *out, size_t cap, const char *s);

/* With a job selected, the header's figures and each node's share are of that job: a
 * job no longer listed shows zeros rather than the cluster's figures under its name. */
static void select_view(struct model *m)
{
    struct model_view *v = &m->view;
    v->job = m->selected_job;
    v->selected = v->job >= 0 ? model_jobs_find(&m->tallies, v->job) : NULL;
    for (uint32_t i = 0; i < m->nnodes; i++) {
        struct model_node *n = &m->nodes[i];
        const struct wire_job_node *row =
            v->job >= 0 ? model_jobs_node(&m->tallies, v->job, n->id) : NULL;
        n->job_running = row ? row->running : 0;
        n->job_done = row ? row->done : 0;
        n->job_busy_s = row ? (double)row->busy_ns / 1e9 : 0.0;
        n->job_util = n->slots ? (double)n->job_running / n->slots : 0.0;
    }
    if (v->job < 0)
        return;
    static const struct model_job none = {.submit_ns = -1, .end_ns = -1};
    const struct model_job *j = v->selected ? v->selected : &none;
    v->total = j->total;
    v->done = j->done;
    v->failed = j->failed;
    v->cancelled = j->cancelled;
    v->running = j->running;
    v->efficiency = j->efficiency;
    v->elapsed_s = j->elapsed_s;
    if (j->name[0])
        copy_string(v->workload, sizeof v->workload, j->name);
    /* A job's rate is its own ends over its window: the samples' rates are the cluster's. */
    uint64_t ended = j->done + j->failed + j->cancelled;
    v->tput_avg = j->elapsed_s > 0 ? (double)ended / j->elapsed_s : 0.0;
    v->tput_now = v->tput_avg;
    if (j->finished)
        v->eta_s = 0.0;
    else if (j->total > ended && v->tput_avg > 0)
        v->eta_s = (double)(j->total - ended) / v->tput_avg;
    else
        v->eta_s = -1.0;
}

/* ---- the clock --------------------------------------------------------------------- */

/* The placement policy in force: one name when every node that announced one agrees. */
static void derive_policy(struct model *m)
{
    const char *names[3] = {NULL, NULL, NULL};
    uint32_t distinct = 0;
    for (uint32_t i = 0; i < m->nnodes && distinct < 3; i++) {
        const char *p = m->extra[i].policy;
        if (!p[0])
            continue;
        bool known = false;
        for (uint32_t k = 0; k < distinct; k++)
            known |= strcmp(names[k], p) == 0;
        if (!known)
            names[distinct++] = p;
    }
    char *out = m->view.policy;
    size_t cap = sizeof m->view.policy;
    if (distinct == 0)
        out[0] = '\0';
    else if (distinct == 1)
        snprintf(out, cap, "%s", names[0]);
    else if (distinct == 2)
        snprintf(out, cap, "mixed (%s, %s)", names[0], names[1]);
    else
        snprintf(out, cap, "mixed (%s, %s, ...)", names[0], names[1]);
}

/* Tasks ended per second over the rate window: from the newest step point at least a
 * window old (or the oldest there is) to the latest samples. */
static double rate_now(const struct model *m, int64_t now, int64_t ended)
{
    if (!m->rate_len)
        return 0.0;
    const struct rate_point *from = &m->rate[m->rate_head];
    for (uint32_t i = 0; i < m->rate_len; i++) {
        const struct rate_point *p = &m->rate[(m->rate_head + i) % RATE_POINTS];
        if (p->time_ns <= now - MODEL_RATE_WINDOW_NS)
            from = p;
    }
    if (now <= from->time_ns)
        return 0.0;
    double tasks = (double)(ended - from->ended);
    return tasks > 0 ? tasks * 1e9 / (double)(now - from->time_ns) : 0.0;
}

void model_tick(struct model *m, int64_t now_ns)
{
    if (!m || now_ns < -TIME_LIMIT || now_ns > TIME_LIMIT)
        return;
    record_steps(m, now_ns, true);
    struct model_view *v = &m->view;
    v->now_ns = now_ns;
    v->total = m->total;
    if (now_ns > INT64_MIN + MODEL_STEAL_WINDOW_NS)
        grant_expire(m, now_ns - MODEL_STEAL_WINDOW_NS);

    uint64_t done = 0, failed = 0, cancelled = 0, running = 0, slots = 0;
    uint64_t stolen = 0, requests = 0, fails = 0, dropped = 0;
    uint32_t dead = 0;
    int64_t ended = 0, ended_since_base = 0;
    double busy_ns = 0, slot_ns = 0;
    for (uint32_t i = 0; i < m->nnodes; i++) {
        struct model_node *n = &m->nodes[i];
        const struct node_extra *x = &m->extra[i];
        node_derive(m, n);
        done += n->done;
        failed += nonneg(n->s.failed);
        cancelled += x->cancelled_counted;
        running += nonneg(n->s.busy);
        slots += n->slots;
        stolen += nonneg(n->s.stolen_in);
        requests += nonneg(n->s.steal_requests);
        fails += nonneg(n->s.steal_fails);
        dropped += nonneg(n->s.dropped);
        dead += n->dead;
        ended += (int64_t)nonneg(n->s.ended);
        if (x->has_base) {
            /* The job's window, not the node's life: an idle cluster before the submit
             * and after the last end is not the run's inefficiency. */
            int64_t from = x->t0 > m->job_ns ? x->t0 : m->job_ns;
            int64_t to = n->time_ns < m->end_ns ? n->time_ns : m->end_ns;
            ended_since_base += n->s.ended - x->ended0;
            busy_ns += (double)(n->s.busy_ns - x->busy_ns0);
            if (to > from)
                slot_ns += (double)n->slots * (double)(to - from);
        }
    }
    v->done = done;
    v->failed = failed;
    v->cancelled = cancelled;
    v->running = running;
    v->slots = slots > UINT32_MAX ? UINT32_MAX : (uint32_t)slots;
    v->steals_total = stolen;
    v->steal_requests = requests;
    v->steal_fails = fails;
    v->dropped = dropped;
    v->dead = dead;

    int64_t from = m->job_ns > v->first_ns ? m->job_ns : v->first_ns;
    int64_t to = now_ns < m->end_ns ? now_ns : m->end_ns;
    double elapsed = m->any_input && to > from ? (double)(to - from) : 0.0;
    v->tput_avg = elapsed > 0 && ended_since_base > 0 ? ended_since_base * 1e9 / elapsed : 0.0;
    v->tput_now = rate_now(m, now_ns, ended);
    v->efficiency = slot_ns > 0 && busy_ns > 0 ? busy_ns / slot_ns : 0.0;
    v->eta_s = -1.0;
    if (v->total) {
        uint64_t finished = done + failed + cancelled;
        if (finished >= v->total) {
            v->eta_s = 0.0;
            if (m->end_ns == INT64_MAX) {
                /* The latest sample that counted the last end closes the window. */
                int64_t last = INT64_MIN;
                for (uint32_t i = 0; i < m->nnodes; i++)
                    if (m->nodes[i].seen && m->nodes[i].time_ns > last)
                        last = m->nodes[i].time_ns;
                m->end_ns = last == INT64_MIN ? now_ns : last;
                /* Said once, at the end of the window, in the log's time order. */
                char body[160];
                snprintf(body, sizeof body, "all %" PRIu64 " tasks ended: %" PRIu64 " done, %"
                         PRIu64 " failed, %" PRIu64 " cancelled (%.3f s from the first submit)",
                         (uint64_t)v->total, (uint64_t)done, (uint64_t)failed,
                         (uint64_t)cancelled,
                         m->end_ns > from ? (double)(m->end_ns - from) / 1e9 : 0.0);
                model_log_text(&m->log, m->end_ns, -1, body);
                v->log = model_log_lines(&m->log, &v->nlog);
            }
        }
        else if (v->tput_now > 0)
            v->eta_s = (double)(v->total - finished) / v->tput_now;
    }
    v->elapsed_s = m->any_input && now_ns > v->first_ns ? (double)(now_ns - v->first_ns) / 1e9
                                                       : 0.0;
    copy_string(v->workload, sizeof v->workload,
                m->header_workload[0] ? m->header_workload : m->job_workload);
    model_jobs_derive(&m->tallies, now_ns, v->slots);
    v->jobs = m->tallies.jobs;
    v->njobs = m->tallies.njobs;
    select_view(m);
    derive_policy(m);
    matrix_rebuild(m);
}

const struct model_view *model_view(const struct model *m)
{
    return m ? &m->view : NULL;
}

/* ---- header ------------------------------------------------------------------------ */

static void copy_string(char *out, size_t cap, const char *s)
{
    snprintf(out, cap, "%s", s ? s : "");
}

int model_set_header(struct model *m, const char *header_json)
{
    if (!m || !header_json)
        return -EINVAL;
    json_error_t err;
    json_t *root = json_loads(header_json, JSON_REJECT_DUPLICATES, &err);
    if (!json_is_object(root)) {
        json_decref(root);
        return -EINVAL;
    }
    int rc = -EINVAL;
    struct header_node *nodes = NULL;
    size_t nnodes = 0;
    json_t *run_id = json_object_get(root, "run_id");
    json_t *jnodes = json_object_get(root, "nodes");
    json_t *workload = json_object_get(root, "workload");
    json_t *name = json_is_object(workload) ? json_object_get(workload, "name") : NULL;
    if ((run_id && !json_is_string(run_id) && !json_is_null(run_id)) ||
        (jnodes && !json_is_array(jnodes)) ||
        (workload && !json_is_object(workload) && !json_is_null(workload)) ||
        (name && !json_is_string(name) && !json_is_null(name)))
        goto out;
    nnodes = json_array_size(jnodes);
    if (nnodes > (size_t)MODEL_MAX_NODE_ID + 1)
        goto out;
    nodes = nnodes ? xcalloc(nnodes, sizeof *nodes) : NULL;
    for (size_t i = 0; i < nnodes; i++) {
        json_t *n = json_array_get(jnodes, i);
        json_t *id = json_object_get(n, "id"), *slots = json_object_get(n, "slots");
        json_t *speed = json_object_get(n, "speed");
        if (!json_is_object(n) || !json_is_integer(id) || json_integer_value(id) < 0 ||
            json_integer_value(id) > MODEL_MAX_NODE_ID ||
            (slots && (!json_is_integer(slots) || json_integer_value(slots) < 0 ||
                       json_integer_value(slots) > UINT32_MAX)) ||
            (speed && !json_is_number(speed)))
            goto out;
        double sp = speed ? json_number_value(speed) : 1.0;
        nodes[i] = (struct header_node){
            .id = (int32_t)json_integer_value(id),
            .slots = slots ? (uint32_t)json_integer_value(slots) : 0,
            .speed = isfinite(sp) && sp > 0 ? sp : 1.0};
    }
    copy_string(m->run_id, sizeof m->run_id, json_string_value(run_id));
    copy_string(m->header_workload, sizeof m->header_workload, json_string_value(name));
    free(m->hnodes);
    m->hnodes = nodes;
    m->nhnodes = (uint32_t)nnodes;
    nodes = NULL;
    copy_string(m->view.run_id, sizeof m->view.run_id, m->run_id);
    copy_string(m->view.workload, sizeof m->view.workload,
                m->header_workload[0] ? m->header_workload : m->job_workload);
    apply_header_nodes(m);
    rc = 0;
out:
    free(nodes);
    json_decref(root);
    return rc;
}

/* ---- life cycle -------------------------------------------------------------------- */

struct model *model_create(void)
{
    struct model *m = xcalloc(1, sizeof *m);
    u64map_init(&m->pairs);
    u64map_init(&m->all_pairs);
    model_log_init(&m->log);
    model_jobs_init(&m->tallies);
    m->selected_job = -1;
    model_reset(m);
    return m;
}

static void clear_run(struct model *m)
{
    for (uint32_t i = 0; i < m->nnodes; i++)
        node_extra_fini(&m->extra[i]);
    m->nnodes = 0;
    if (m->index_of)
        index_rebuild(m);
    uint64_t key;
    void *value;
    for (size_t pos = 0; (pos = u64map_next(&m->pairs, pos, &key, &value)) != 0;)
        free(value);
    u64map_fini(&m->pairs);
    for (size_t pos = 0; (pos = u64map_next(&m->all_pairs, pos, &key, &value)) != 0;)
        free(value);
    u64map_fini(&m->all_pairs);
    m->grant_head = m->grant_len = 0;
    m->njobs = 0;
    m->total = 0;
    model_jobs_reset(&m->tallies);
    m->job_workload[0] = '\0';
    m->any_input = false;
    m->inputs = 0;
    m->step_next = 0;
    m->rate_head = m->rate_len = 0;
    m->job_ns = INT64_MIN;
    m->end_ns = INT64_MAX;
}

void model_reset(struct model *m)
{
    if (!m)
        return;
    clear_run(m);
    model_log_reset(&m->log);
    memset(&m->view, 0, sizeof m->view);
    copy_string(m->view.run_id, sizeof m->view.run_id, m->run_id);
    copy_string(m->view.workload, sizeof m->view.workload, m->header_workload);
    m->view.eta_s = -1.0;
    m->view.nodes = m->nodes;
    m->view.log = model_log_lines(&m->log, &m->view.nlog);
    apply_header_nodes(m);
    matrix_rebuild(m);
}

void model_destroy(struct model *m)
{
    if (!m)
        return;
    clear_run(m);
    model_log_fini(&m->log);
    model_jobs_fini(&m->tallies);
    free(m->nodes);
    free(m->extra);
    free(m->index_of);
    free(m->grants);
    free(m->jobs);
    free(m->recent);
    free(m->hnodes);
    free(m);
}
