/*
 * sim_net — the data plane's links in the discrete-event engine: an input's transfer
 * from the node that holds it (its writer) to the node that will run its reader, as a
 * fluid flow out of the writer's link into the reader's (issue 20).
 *
 * The daemons (data.c) meter each chunk through the writer's egress bucket as it is
 * sent and through the reader's ingress bucket as it arrives; a fetch is done when the
 * ingress link would have delivered its last byte, and the reader's window (the bytes
 * asked for and not arrived) frees as the chunks arrive, not as they are delivered.
 * So here, in two stages:
 *
 * - Out of the writer: its link is shared equally by the flows leaving it, taken again
 *   whenever one starts or ends there, so a writer read by k nodes at once gives each
 *   a k-th of its link.  Nothing at the reader slows this stage, as nothing slows the
 *   daemons' replies but the reader's window.
 * - Into the reader: a FIFO queue drained at the link's rate (the ingress bucket's
 *   reservations are FIFO).  It fills at the rate of the flows entering, and a flow is
 *   through when the bytes queued before its last byte are.
 *
 * A reader admits its fetches in the order asked while the window the admitted ones
 * hold fits the daemons' DATA_WINDOW, the first always: each holds at most FETCH_WINDOW
 * chunks of it, and no more than it still has to send, so a fetch near its end hands the
 * rest of its window on, as the daemons' oldest-first requests do (an EV_WINDOW comes
 * when the window will have room at the present rates).  data.c gives its window to the
 * oldest fetches first, so a reader's transfers run nearly in order, two of a fan-in's
 * 1 MB inputs at a time rather than all of them sharing its link and all ending late.
 *
 * This replaced one fluid rate a flow, bandwidth / max(flows out of the writer, flows
 * into the reader), whose reader held a fetch's whole window to its end and whose flows
 * held back at a hot writer handed the reader's unused share to none: 8-node fan-outs
 * of 4 MB outputs simulated 13-16 % longer than they ran and a fan-in of them 20 %,
 * against 6, 12 and 6 % now; all-pairs 40 x 40 on 16 nodes 8 % against 6 %.  (A model
 * of the reader's ingress alone had the 4 MB fan-outs end a third sooner than the real
 * runs; a FIFO reservation of the writer's link in request order left readers idle
 * that the daemons keep busy.)
 *
 * With a host rate (sim_config.host_Bps: a cluster emulated on one machine, whose cores
 * copy every byte), the flows in flight share that rate too, max-min over their shares
 * of their writers' links (reshare_all): 32 daemons on 2 cores moving 3.9 GB of a
 * fan-in's outputs kept both cores busy.
 * Every start and end then reshares every flow in flight, O(flows): meant for the few
 * dozen nodes one host emulates.
 *
 * Cost: a flow's start or end reshares the flows leaving its writer, O(their number),
 * and brings the reader's queue up to date, O(1); each flow has one pending
 * EV_FLOW_END.  A flow slowed down keeps its event, which fires early, finds bytes left
 * and is pushed again; one sped up gets an earlier event and a new generation, which
 * makes the old one stale.  When the last byte is out of the writer, the flow leaves
 * the links and its arrival is due when the reader's queue has delivered it, one
 * latency on: its task's EV_STAGED when it was the task's last transfer, else its event
 * pushed once more.
 */
#include <math.h>
#include <stdlib.h>

#include "core/base/xalloc.h"
#include "core/sim/sim_core.h"

/* data.c's FETCH_WINDOW chunks of DATA_FETCH_CHUNK bytes a fetch, DATA_WINDOW a node
 * (core/sim does not include the runtime). */
#define FETCH_WINDOW_BYTES (4ull * (256u << 10))
#define DATA_WINDOW_BYTES (2ull * FETCH_WINDOW_BYTES)

/* A transfer's bytes are through when less than this is left: the completion times
 * are rounded up to whole ns, so what is left then is floating-point dust. */
#define DONE_BYTES 0.5

static uint64_t window_of(const struct flow *f)
{
    return f->bytes < FETCH_WINDOW_BYTES ? f->bytes : FETCH_WINDOW_BYTES;
}

/* The bytes of a reader's window f holds at time t (>= its `since`): what it still has
 * to receive, up to its window.  A fluid view of the daemons' requested-and-not-received
 * bytes, which at a fetch's end fall with what is left. */
static double window_held(const struct flow *f, int64_t t)
{
    double left = f->left - f->rate * (double)(t - f->since);
    double w = (double)window_of(f);
    return left <= 0 ? 0 : left < w ? left : w;
}

static double window_used(const struct sim *s, const struct node *r, int64_t t)
{
    double used = 0;
    for (uint32_t k = 0; k < r->nflows_in; k++)
        used += window_held(&s->flows[r->flows_in[k]], t);
    return used;
}

/* Whether the reader's window has room now for its first waiting fetch. */
static bool window_admits(const struct sim *s, const struct node *r)
{
    if (!r->nwaiting)
        return false;
    double want = (double)window_of(&s->flows[r->waiting_first]);
    return !r->nflows_in ||
           window_used(s, r, s->now) + want <= (double)DATA_WINDOW_BYTES + DONE_BYTES;
}

/* When the reader's window will have room for its first waiting fetch at the flows'
 * present rates, pushed as an EV_WINDOW unless one is due as soon: the window held falls
 * piecewise linearly, each flow holding its whole window until it has that much left,
 * then falling with it to 0. */
static void window_watch(struct sim *s, uint32_t reader)
{
    struct node *r = &s->nodes[reader];
    if (!r->nwaiting || !r->nflows_in)
        return;
    double target = (double)DATA_WINDOW_BYTES - (double)window_of(&s->flows[r->waiting_first]);
    /* Breakpoints past now, two a flow: where it starts giving its window back, where
     * it ends.  Few a reader (its window holds two fetches of a megabyte or more). */
    enum { MOST = 64 };
    double at[2 * MOST];
    uint32_t n = 0;
    for (uint32_t k = 0; k < r->nflows_in && n + 2 <= 2 * MOST; k++) {
        const struct flow *f = &s->flows[r->flows_in[k]];
        if (f->rate <= 0)
            continue;
        double left = f->left - f->rate * (double)(s->now - f->since);
        if (left <= 0)
            continue;
        double w = (double)window_of(f);
        if (left > w)
            at[n++] = (double)s->now + (left - w) / f->rate;
        at[n++] = (double)s->now + left / f->rate;
    }
    if (!n)
        return;
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && at[j - 1] > at[j]; j--) {
            double x = at[j];
            at[j] = at[j - 1];
            at[j - 1] = x;
        }
    double t0 = (double)s->now, u0 = window_used(s, r, s->now), when = -1;
    for (uint32_t i = 0; i < n && when < 0; i++) {
        double u1 = window_used(s, r, (int64_t)ceil(at[i]));
        if (u1 <= target + DONE_BYTES)
            when = u0 > u1 && u0 > target ? t0 + (at[i] - t0) * (u0 - target) / (u0 - u1)
                                          : at[i];
        t0 = at[i];
        u0 = u1;
    }
    if (when < 0)
        return;
    int64_t due = (int64_t)ceil(when);
    if (due < s->now)
        due = s->now;
    if (r->window_due > s->now && r->window_due <= due)
        return;
    r->window_due = due;
    r->window_gen++;
    sim__push(s, due, EV_WINDOW, reader, 0, r->window_gen, 0);
}

static void list_add(uint32_t **v, uint32_t *n, size_t *cap, uint32_t flow, uint32_t *at)
{
    *v = xgrow(*v, cap, *n + 1, sizeof **v);
    *at = *n;
    (*v)[(*n)++] = flow;
}

/* The reader's ingress backlog brought up to now at the rate its flows brought bytes. */
static void ingress_advance(struct sim *s, struct node *r)
{
    double bw = s->cfg->bandwidth_Bps / NS_PER_S;
    double b = r->backlog + (r->arriving - bw) * (double)(s->now - r->backlog_at);
    r->backlog = b > 0 ? b : 0;
    r->backlog_at = s->now;
}

/* Brings f's bytes up to now at the rate it had, gives it its share of its writer's link,
 * and moves its event earlier if it now ends sooner. */
static void reshare(struct sim *s, uint32_t i)
{
    struct flow *f = &s->flows[i];
    f->left -= f->rate * (double)(s->now - f->since);
    if (f->left < 0)
        f->left = 0;
    f->since = s->now;
    double rate = s->cfg->bandwidth_Bps / NS_PER_S / s->nodes[f->writer].nflows_out;
    if (s->cfg->host_Bps > 0 && s->host_level < rate)
        rate = s->host_level;
    struct node *r = &s->nodes[f->reader];
    ingress_advance(s, r);
    r->arriving += rate - f->rate;
    f->rate = rate;
    int64_t end = s->now + (int64_t)ceil(f->left / f->rate);
    /* Sped up by less than a 64th of its time left, it keeps its event and ends that
     * much late at most: a writer read by k nodes at once speeds each of the others by
     * 1/k at every end, and moving k events k times made a hot object quadratic. */
    int64_t slack = f->due == INT64_MAX ? 0 : (f->due - s->now) / 64;
    if (end < f->due - slack) {
        f->due = end;
        f->gen++;
        sim__push(s, end, EV_FLOW_END, f->reader, i, f->gen, 0);
    }
    if (r->nwaiting)
        window_watch(s, f->reader);
}

static int by_rate(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* With a host rate, a flow admitted or through changes every flow's share.  The host's
 * rate is filled max-min over the flows' shares of their writers' links: those held
 * below an equal share of it by their writers keep their rates, and the rest split what
 * those leave.  (An equal split, host / flows, held every flow to it: all-pairs, whose
 * many transfers from a few hot holders crawl, simulated 22 % longer than it ran on 32
 * daemons, its few fast transfers capped by the slow ones' shares.) */
static void reshare_all(struct sim *s)
{
    double host = s->cfg->host_Bps / NS_PER_S, bw = s->cfg->bandwidth_Bps / NS_PER_S;
    s->host_shares = xgrow(s->host_shares, &s->host_shares_cap, s->nactive ? s->nactive : 1,
                           sizeof *s->host_shares);
    size_t n = 0;
    for (size_t i = 0; i < s->nflows; i++)
        if (s->flows[i].active)
            s->host_shares[n++] = bw / s->nodes[s->flows[i].writer].nflows_out;
    qsort(s->host_shares, n, sizeof *s->host_shares, by_rate);
    s->host_level = INFINITY;
    for (size_t k = 0; k < n; k++) {
        if (s->host_shares[k] * (double)(n - k) > host) {
            s->host_level = host / (double)(n - k);
            break;
        }
        host -= s->host_shares[k];
    }
    for (size_t i = 0; i < s->nflows; i++)
        if (s->flows[i].active)
            reshare(s, (uint32_t)i);
}

static void admit(struct sim *s, uint32_t i)
{
    struct flow *f = &s->flows[i];
    struct node *w = &s->nodes[f->writer], *r = &s->nodes[f->reader];
    f->active = true;
    f->since = s->now;
    f->rate = 0;
    f->due = INT64_MAX;
    s->nactive++;
    list_add(&w->flows_out, &w->nflows_out, &w->flows_out_cap, i, &f->out_at);
    list_add(&r->flows_in, &r->nflows_in, &r->flows_in_cap, i, &f->in_at);
}

/* Admits the reader's waiting fetches that its window now holds, in the order asked,
 * then gives the flows through its link and through their writers' their shares, once
 * every count is final: a flow that ended and one admitted in its place leave the
 * others' rates as they were, and resharing in between would push their events earlier
 * only to find them early. */
static void admit_waiting(struct sim *s, uint32_t reader)
{
    struct node *r = &s->nodes[reader];
    uint32_t first_admitted = r->nflows_in;
    while (r->nwaiting) {
        uint32_t i = r->waiting_first;
        if (!window_admits(s, r))
            break;
        r->waiting_first = s->flows[i].next;
        r->nwaiting--;
        admit(s, i);
    }
    if (s->cfg->host_Bps > 0) {
        if (r->nflows_in > first_admitted)
            reshare_all(s);
        return;
    }
    for (uint32_t k = first_admitted; k < r->nflows_in; k++) {
        const struct node *w = &s->nodes[s->flows[r->flows_in[k]].writer];
        for (uint32_t j = 0; j < w->nflows_out; j++)
            reshare(s, w->flows_out[j]);
    }
    window_watch(s, reader);
}

void sim__net_window(struct sim *s, uint32_t reader, uint32_t gen)
{
    struct node *r = &s->nodes[reader];
    if (gen != r->window_gen)
        return;
    r->window_due = INT64_MAX;
    if (window_admits(s, r))
        admit_waiting(s, reader);
    else
        window_watch(s, reader);
}

uint32_t sim__net_fetch(struct sim *s, uint32_t reader, uint32_t writer, uint32_t task,
                        uint64_t key, uint64_t bytes)
{
    uint32_t i;
    if (s->nfree_flows) {
        i = s->free_flow;
        s->free_flow = s->flows[i].next;
        s->nfree_flows--;
    } else {
        s->flows = xgrow(s->flows, &s->flows_cap, s->nflows + 1, sizeof *s->flows);
        i = (uint32_t)s->nflows++;
        s->flows[i].gen = 0;
    }
    struct flow *f = &s->flows[i];
    /* The generation lives on across reuses: a freed flow's stale events must not match
     * its next transfer. */
    *f = (struct flow){.left = (double)bytes, .bytes = bytes, .asked = s->now,
                       .writer = writer, .reader = reader, .task = task, .gen = f->gen + 1,
                       .joined = UINT32_MAX, .key = key};
    struct node *r = &s->nodes[reader];
    if (r->nwaiting++)
        s->flows[r->waiting_last].next = i;
    else
        r->waiting_first = i;
    r->waiting_last = i;
    admit_waiting(s, reader);
    return i;
}

void sim__net_join(struct sim *s, uint32_t i, uint32_t task)
{
    uint32_t j;
    if (s->free_join != UINT32_MAX) {
        j = s->free_join;
        s->free_join = s->joins[j].next;
    } else {
        s->joins = xgrow(s->joins, &s->joins_cap, s->njoins + 1, sizeof *s->joins);
        j = (uint32_t)s->njoins++;
    }
    s->joins[j] = (struct join){.task = task, .next = s->flows[i].joined};
    s->flows[i].joined = j;
    s->tasks[task].fetching++;
}

static void list_remove(uint32_t *v, uint32_t *n, uint32_t at, struct flow *flows, bool out)
{
    uint32_t moved = v[--*n];
    v[at] = moved;
    if (out)
        flows[moved].out_at = at;
    else
        flows[moved].in_at = at;
}

void sim__net_arrived(struct sim *s, uint32_t i)
{
    struct flow *f = &s->flows[i];
    sim__trace(s, f->reader, TRACE_DATA_FETCH, UINT32_MAX, (int32_t)f->writer, 0, 0,
               (int64_t)f->bytes, s->now - f->asked);
    u64map_put(&s->nodes[f->reader].cache, f->key, SIM_CACHE_HERE);
    for (uint32_t j = f->joined; j != UINT32_MAX;) {
        uint32_t next = s->joins[j].next, task = s->joins[j].task;
        if (--s->tasks[task].fetching == 0)
            sim__push(s, s->now, EV_STAGED, f->reader, task, 0, 0);
        s->joins[j].next = s->free_join;
        s->free_join = j;
        j = next;
    }
    f->gen++;
    f->next = s->free_flow;
    s->free_flow = i;
    s->nfree_flows++;
}

void sim__net_flow_end(struct sim *s, uint32_t i, uint32_t gen)
{
    struct flow *f = &s->flows[i];
    if (gen != f->gen)
        return;
    if (!f->active) {
        sim__net_arrived(s, i);
        return;
    }
    f->left -= f->rate * (double)(s->now - f->since);
    f->since = s->now;
    if (f->left >= DONE_BYTES) {
        /* Slowed down since this event was pushed. */
        f->due = s->now + (int64_t)ceil(f->left / f->rate);
        sim__push(s, f->due, EV_FLOW_END, f->reader, i, f->gen, 0);
        return;
    }
    struct node *w = &s->nodes[f->writer], *r = &s->nodes[f->reader];
    f->active = false;
    s->nactive--;
    list_remove(w->flows_out, &w->nflows_out, f->out_at, s->flows, true);
    list_remove(r->flows_in, &r->nflows_in, f->in_at, s->flows, false);
    /* Its last byte has left the writer and joins the reader's ingress queue: through
     * when the bytes before it are. */
    ingress_advance(s, r);
    r->arriving -= f->rate;
    if (r->arriving < 0 || !r->nflows_in)
        r->arriving = 0;
    int64_t through = s->now + (int64_t)ceil(r->backlog / (s->cfg->bandwidth_Bps / NS_PER_S));
    uint32_t before = r->nflows_in;
    admit_waiting(s, f->reader);
    if (s->cfg->host_Bps > 0) {
        if (r->nflows_in == before) /* else admit_waiting reshared them all */
            reshare_all(s);
    } else {
        for (uint32_t k = 0; k < w->nflows_out; k++)
            reshare(s, w->flows_out[k]);
    }
    /* The task's last input is the one that stages it, and its EV_STAGED brings the
     * arrival along: one event fewer a task. */
    if (--s->tasks[f->task].fetching == 0)
        sim__push(s, through + s->latency_ns, EV_STAGED, f->reader, f->task, 0,
                  (uint64_t)i + 1);
    else
        sim__push(s, through + s->latency_ns, EV_FLOW_END, f->reader, i, f->gen, 0);
}

void sim__net_free(struct sim *s)
{
    for (uint32_t i = 0; s->nodes && i < s->cfg->nodes; i++) {
        free(s->nodes[i].flows_out);
        free(s->nodes[i].flows_in);
    }
    free(s->flows);
    free(s->joins);
    free(s->host_shares);
}
