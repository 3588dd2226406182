/*
 * sim_net — the data plane's links in the discrete-event engine: an input's transfer
 * from the node that holds it (its writer) to the node that will run its reader, as a
 * fluid flow that shares both nodes' links (issue 20).
 *
 * The daemons (data.c) serve a node's fetches concurrently, each chunk metered through
 * the writer's egress bucket and then the reader's ingress bucket, so a writer read by
 * k nodes at once gives each a k-th of its link.  A model of the reader's ingress alone
 * had 8-node fan-outs with 4 MB outputs end a third sooner than the real runs did, and
 * SimGrid, which shares a writer's link, 11-28 % later than it at 10-1,000 nodes.
 *
 * A flow's rate is bandwidth / max(flows leaving its writer, flows entering its reader),
 * taken again whenever a flow starts or ends at either node: a local approximation of
 * max-min fairness, exact when one link is the bottleneck of every flow through it, and
 * short of it when a link's other flows are held back elsewhere (their unused share is
 * not handed round).  Exact max-min would need a progressive filling over every
 * connected flow at each change; this touches only the flows of two nodes.
 *
 * A reader admits its fetches in the order asked while their windows fit the daemons'
 * DATA_WINDOW (each fetch holding at most FETCH_WINDOW chunks of it), the first always:
 * data.c gives its window to the oldest fetches first, so a reader's transfers run
 * nearly in order, two of a fan-in's 1 MB inputs at a time rather than all of them
 * sharing its link and all ending late.  (A FIFO reservation of the writer's link in
 * request order, tried before, left readers idle that the daemons keep busy: that is
 * what the sharing avoids.)
 *
 * With a host rate (sim_config.host_Bps: a cluster emulated on one machine, whose cores
 * copy every byte), a flow's rate is also at most that rate over the flows in flight:
 * 32 daemons on 2 cores moving 3.9 GB of a fan-in's outputs kept both cores busy, and the
 * run took 43 % longer than its links alone allowed.  Every start and end then reshares
 * every flow in flight, O(flows): meant for the few dozen nodes one host emulates.
 *
 * Cost: a flow's start or end updates the flows of its two nodes, O(their flows), and
 * each flow has one pending EV_FLOW_END.  A flow slowed down keeps its event, which
 * fires early, finds bytes left and is pushed again; one sped up gets an earlier event
 * and a new generation, which makes the old one stale.  When the last byte is through,
 * the flow leaves the links and its arrival is due one latency on: its task's EV_STAGED
 * when it was the task's last transfer, else its event pushed once more.
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

static void list_add(uint32_t **v, uint32_t *n, size_t *cap, uint32_t flow, uint32_t *at)
{
    *v = xgrow(*v, cap, *n + 1, sizeof **v);
    *at = *n;
    (*v)[(*n)++] = flow;
}

/* Brings f's bytes up to now at the rate it had, gives it the share its two nodes'
 * flows leave it, and moves its event earlier if it now ends sooner. */
static void reshare(struct sim *s, uint32_t i)
{
    struct flow *f = &s->flows[i];
    f->left -= f->rate * (double)(s->now - f->since);
    if (f->left < 0)
        f->left = 0;
    f->since = s->now;
    uint32_t out = s->nodes[f->writer].nflows_out, in = s->nodes[f->reader].nflows_in;
    f->rate = s->cfg->bandwidth_Bps / NS_PER_S / (out > in ? out : in);
    if (s->cfg->host_Bps > 0 && s->cfg->host_Bps / NS_PER_S / s->nactive < f->rate)
        f->rate = s->cfg->host_Bps / NS_PER_S / s->nactive;
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
}

/* With a host rate, a flow admitted or through changes every flow's share. */
static void reshare_all(struct sim *s)
{
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
    r->window_used += window_of(f);
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
        if (r->nflows_in && r->window_used + window_of(&s->flows[i]) > DATA_WINDOW_BYTES)
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
    for (uint32_t k = 0; k < r->nflows_in; k++)
        reshare(s, r->flows_in[k]);
}

void sim__net_fetch(struct sim *s, uint32_t reader, uint32_t writer, uint32_t task,
                    uint64_t bytes)
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
                       .writer = writer, .reader = reader, .task = task, .gen = f->gen + 1};
    struct node *r = &s->nodes[reader];
    if (r->nwaiting++)
        s->flows[r->waiting_last].next = i;
    else
        r->waiting_first = i;
    r->waiting_last = i;
    admit_waiting(s, reader);
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
    r->window_used -= window_of(f);
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
        sim__push(s, s->now + s->latency_ns, EV_STAGED, f->reader, f->task, 0,
                  (uint64_t)i + 1);
    else
        sim__push(s, s->now + s->latency_ns, EV_FLOW_END, f->reader, i, f->gen, 0);
}

void sim__net_free(struct sim *s)
{
    for (uint32_t i = 0; s->nodes && i < s->cfg->nodes; i++) {
        free(s->nodes[i].flows_out);
        free(s->nodes[i].flows_in);
    }
    free(s->flows);
}
