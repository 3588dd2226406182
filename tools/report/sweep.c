/*
 * report sweep — the time-ordered half of the analysis (see analysis.h for what each
 * figure means).  The state changes collected by the file pass are sorted by time (an
 * LSD radix sort: stable, so events of one node at one instant keep their file order,
 * which is their sequence order) and replayed once, holding per node its running tasks,
 * fetches in flight, queue lengths and whether a steal request is out.
 *
 * Idle time is charged lazily: each node remembers since when its state has held and is
 * charged for that stretch when its own state changes.  What a node's idle slots are
 * charged to also depends on whether *other* nodes hold queued work, but that only
 * changes when the set of nodes with a non-empty queue crosses between none, exactly one
 * (which one matters: it sees no work elsewhere) and several; only then are all nodes
 * charged up to the instant.  A busy run therefore costs O(events), not
 * O(events x nodes).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/xalloc.h"
#include "tools/report/analysis_internal.h"

#define RING 16 /* recent starts kept per node for the victim's throughput */

struct snode {
    int32_t slots;
    int32_t running, fetching, lready, sready;
    int32_t asking;         /* steal requests without an answer (asynchronous thieves
                               may have several out) */
    int64_t since;
    int64_t first_start, last_end;
    int64_t ring[RING];     /* recent starts */
    unsigned ring_n, ring_at;
    int64_t lengths[RING];  /* recent run lengths (ns) */
    unsigned len_n, len_at;
    bool dead;              /* from its first NODE_DOWN on, when it was declared dead */
};

/* Who holds queued work: none, one (which) or several, for SReadyQ and LReadyQ. */
struct holders {
    uint32_t s_count, l_count;
    size_t s_xor, l_xor; /* with one holder, its index */
};

struct signature {
    int s_one, l_one; /* -2: none, -1: several, else the only holder */
};

struct audit {
    int64_t t;
    uint32_t task;
    uint32_t victim;
    int32_t thief;
    uint32_t position;
    double rate;
};

struct sweep {
    struct report_analysis *a;
    struct sweep_input *in;
    struct snode *n;
    size_t nn;
    struct holders h;
    struct signature sig;
    int recovering;     /* recovery windows open (SW_FAIL_BEGIN .. SW_FAIL_END) */
    double t0, t1, width; /* ns */
    size_t nbins;
    double *busy;       /* nbins x nn slot-ns */
    double *ready_area; /* nbins x nn task-ns */
    double *ready_max;  /* nbins x nn */
    double *poll_sum, *poll_n; /* nbins x nn */
    double *poll_max;   /* nbins */
    struct audit *aud;
    size_t naud, cap_aud;
    int64_t running;    /* tasks running on all nodes */
    int64_t full;       /* that many make every slot busy: min(slots, tasks) */
    int64_t full_at;    /* when `running` first reached `full`, NO_TIME before */
};

/* A node's running count changes: the cluster's is followed to see every slot busy. */
static void set_running(struct sweep *s, struct snode *n, int32_t v, int64_t t)
{
    s->running += v - n->running;
    n->running = v;
    if (s->full_at == NO_TIME && s->full > 0 && s->running >= s->full)
        s->full_at = t;
}

/* ---- sorting ---------------------------------------------------------------------------- */

static void sort_recs(struct sweep_rec **recs, size_t n)
{
    if (n < 2)
        return;
    struct sweep_rec *src = *recs, *dst = xmalloc(n * sizeof *dst);
    uint64_t any = 0, all = ~(uint64_t)0;
    for (size_t i = 0; i < n; i++) {
        any |= (uint64_t)src[i].t;
        all &= (uint64_t)src[i].t;
    }
    for (unsigned shift = 0; shift < 64; shift += 8) {
        if ((((any ^ all) >> shift) & 0xff) == 0)
            continue; /* every key has the same byte here */
        size_t pos[256] = {0};
        for (size_t i = 0; i < n; i++)
            pos[((uint64_t)src[i].t >> shift) & 0xff]++;
        size_t sum = 0;
        for (int d = 0; d < 256; d++) {
            size_t c = pos[d];
            pos[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[pos[((uint64_t)src[i].t >> shift) & 0xff]++] = src[i];
        struct sweep_rec *tmp = src;
        src = dst;
        dst = tmp;
    }
    free(dst);
    *recs = src;
}

/* ---- charging ----------------------------------------------------------------------- */

static struct signature signature_of(const struct holders *h)
{
    return (struct signature){
        .s_one = h->s_count == 0 ? -2 : h->s_count == 1 ? (int)h->s_xor : -1,
        .l_one = h->l_count == 0 ? -2 : h->l_count == 1 ? (int)h->l_xor : -1,
    };
}

static bool elsewhere(int one, size_t self)
{
    return one == -1 || (one >= 0 && (size_t)one != self);
}

static size_t bin_of(const struct sweep *s, double t)
{
    double k = floor((t - s->t0) / s->width);
    if (k < 0)
        return 0;
    if (k >= (double)s->nbins)
        return s->nbins - 1;
    return (size_t)k;
}

/* Spreads a stretch [lo, hi) of constant state over the bins. */
static void bin_stretch(struct sweep *s, size_t i, double lo, double hi, double busy,
                        double ready)
{
    if (!s->nbins)
        return;
    for (size_t b = bin_of(s, lo); b < s->nbins; b++) {
        double blo = s->t0 + (double)b * s->width;
        double bhi = b + 1 == s->nbins ? s->t1 : blo + s->width;
        if (blo >= hi)
            break;
        double ov = fmin(hi, bhi) - fmax(lo, blo);
        if (ov <= 0)
            continue;
        size_t at = b * s->nn + i;
        s->busy[at] += busy * ov;
        s->ready_area[at] += ready * ov;
        if (ready > s->ready_max[at])
            s->ready_max[at] = ready;
    }
}

/* Charges node i's idle slots from `since` to t to their causes (analysis.h). */
static void charge(struct sweep *s, size_t i, int64_t t)
{
    struct snode *n = &s->n[i];
    if (t <= n->since)
        return;
    double lo = fmax((double)n->since, s->t0), hi = fmin((double)t, s->t1);
    n->since = t;
    if (hi <= lo)
        return;
    double *lost = s->a->nodes[i].lost_s;
    if (n->dead) {
        /* Every slot of a dead node is lost to the failure; what it ran when it died is
         * work thrown away (the analysis counts it), not busy time. */
        bin_stretch(s, i, lo, hi, 0, 0);
        lost[REPORT_LOST_FAILURE] += (n->slots > 0 ? n->slots : 0) * (hi - lo) / 1e9;
        return;
    }
    int32_t idle = n->slots - n->running;
    if (idle < 0)
        idle = 0;
    double busy = n->running < n->slots ? n->running : n->slots;
    double ready = (double)n->lready + n->sready;
    bin_stretch(s, i, lo, hi, busy, ready);
    if (!idle)
        return;
    if (s->recovering) {
        lost[REPORT_LOST_FAILURE] += idle * (hi - lo) / 1e9;
        return;
    }
    /* Ramp-up is [.., first start), tail [last end, ..); the pass keeps last end at or
     * after first start.  Both fall on this node's own events, so a stretch rarely
     * spans them, but nothing here relies on that. */
    double mid_lo = lo, mid_hi = hi;
    if (n->first_start != NO_TIME) {
        double fs = (double)n->first_start;
        if (lo < fs)
            lost[REPORT_LOST_RAMP_UP] += idle * (fmin(hi, fs) - lo) / 1e9;
        mid_lo = fmax(lo, fs);
        if (n->last_end != NO_TIME) {
            double le = fmax((double)n->last_end, fs);
            if (hi > le)
                lost[REPORT_LOST_TAIL] += idle * (hi - fmax(lo, le)) / 1e9;
            mid_hi = fmin(hi, le);
        }
    }
    if (mid_hi <= mid_lo)
        return;
    double dt = (mid_hi - mid_lo) / 1e9;
    int32_t rest = idle;
    int32_t data = n->fetching < rest ? n->fetching : rest;
    rest -= data;
    int32_t own = n->lready + n->sready;
    int32_t dispatch = own < rest ? own : rest;
    rest -= dispatch;
    lost[REPORT_LOST_DATA] += data * dt;
    lost[REPORT_LOST_DISPATCH] += dispatch * dt;
    if (!rest)
        return;
    enum report_lost_cause c;
    if (elsewhere(s->sig.s_one, i))
        c = n->asking ? REPORT_LOST_STEAL : REPORT_LOST_IMBALANCE;
    else if (elsewhere(s->sig.l_one, i))
        c = REPORT_LOST_LOCALITY;
    else
        c = REPORT_LOST_NO_WORK;
    lost[c] += rest * dt;
}

static void charge_all(struct sweep *s, int64_t t)
{
    for (size_t i = 0; i < s->nn; i++)
        charge(s, i, t);
}

/* ---- state changes -------------------------------------------------------------------- */

static void queue_add(struct sweep *s, size_t i, bool shared, int delta)
{
    struct snode *n = &s->n[i];
    int32_t *len = shared ? &n->sready : &n->lready;
    uint32_t *count = shared ? &s->h.s_count : &s->h.l_count;
    size_t *x = shared ? &s->h.s_xor : &s->h.l_xor;
    if (delta < 0 && *len == 0)
        return; /* a leave without an arrival (events lost): nothing to take */
    int32_t before = *len;
    *len += delta;
    if ((before == 0) != (*len == 0)) {
        *count += *len ? 1 : (uint32_t)-1;
        *x ^= i;
    }
}

static void dequeue(struct sweep *s, struct rtask *tk, size_t at, int64_t t)
{
    if (tk->qnode < 0)
        return;
    size_t q = (size_t)tk->qnode;
    if (q != at)
        charge(s, q, t);
    queue_add(s, q, tk->qshared, -1);
    tk->qnode = -1;
}

/*
 * The victim's throughput at this moment: the smaller of the pace of its recent starts
 * and what its slots can do at its recent task length.  Either alone misleads: starts
 * come in bursts when slots fill together (a burst of 8 starts in 50 µs is not 160,000
 * tasks/s), and noop tasks have no length (their pace is the node's overhead).  Without
 * recent ends the node's mean length over the run stands in; without either, its start
 * rate over the run.
 */
static double victim_rate(const struct sweep *s, size_t v)
{
    const struct snode *n = &s->n[v];
    const struct pass_node *pn = &s->in->pn[v];
    double starts = INFINITY, capacity = INFINITY;
    if (n->ring_n >= 2) {
        int64_t newest = n->ring[(n->ring_at + RING - 1) % RING];
        int64_t oldest = n->ring[(n->ring_at + RING - n->ring_n) % RING];
        if (newest > oldest)
            starts = (double)(n->ring_n - 1) / ((double)(newest - oldest) / 1e9);
    }
    double length = NAN;
    if (n->len_n) {
        int64_t sum = 0;
        for (unsigned k = 0; k < n->len_n; k++)
            sum += n->lengths[k];
        length = (double)sum / n->len_n / 1e9;
    } else if (pn->runs) {
        length = (double)pn->run_ns / (double)pn->runs / 1e9;
    }
    if (length > 0 && n->slots > 0)
        capacity = n->slots / length;
    double rate = fmin(starts, capacity);
    if (isfinite(rate))
        return rate;
    if (pn->starts >= 2 && pn->last_start_ns > pn->first_start_ns)
        return (double)(pn->starts - 1) / ((double)(pn->last_start_ns - pn->first_start_ns) / 1e9);
    return NAN;
}

static void poll(struct sweep *s, size_t i, int64_t t)
{
    if (!s->nbins || (double)t < s->t0 || (double)t > s->t1)
        return;
    size_t b = bin_of(s, (double)t);
    double v = (double)s->n[i].lready + s->n[i].sready;
    s->poll_sum[b * s->nn + i] += v;
    s->poll_n[b * s->nn + i] += 1;
    if (v > s->poll_max[b])
        s->poll_max[b] = v;
}

static void apply(struct sweep *s, const struct sweep_rec *r)
{
    size_t i = r->node;
    struct snode *n = &s->n[i];
    const struct steal_out *so = r->kind == SW_STOLEN_OUT ? &s->in->steals[r->task] : NULL;
    struct rtask *tk = so ? &s->in->tasks[so->task]
                       : r->kind <= SW_END ? &s->in->tasks[r->task]
                                           : NULL;
    charge(s, i, r->t);
    switch ((enum sweep_kind)r->kind) {
    case SW_QUEUED_LOCAL:
    case SW_QUEUED_SHARED:
        dequeue(s, tk, i, r->t); /* FLDS moves a task from LReadyQ to SReadyQ so */
        tk->qnode = (int32_t)i;
        tk->qshared = r->kind == SW_QUEUED_SHARED;
        queue_add(s, i, tk->qshared, +1);
        break;
    case SW_STOLEN_OUT: {
        /* Thieves take from the tail: every other task queued here was ahead of it. */
        uint32_t pos = (uint32_t)(n->lready + n->sready);
        if (tk->qnode != (int32_t)i)
            pos++;
        s->aud = xgrow(s->aud, &s->cap_aud, s->naud + 1, sizeof *s->aud);
        s->aud[s->naud++] = (struct audit){.t = r->t, .task = so->task, .victim = (uint32_t)i,
                                           .thief = so->thief, .position = pos,
                                           .rate = victim_rate(s, i)};
        dequeue(s, tk, i, r->t);
        break;
    }
    case SW_PUSHED:
        dequeue(s, tk, i, r->t);
        break;
    case SW_START:
        dequeue(s, tk, i, r->t);
        if (tk->run_node >= 0) {
            /* Started again without an end: its first run was lost with its node. */
            size_t m = (size_t)tk->run_node;
            if (m != i)
                charge(s, m, r->t);
            if (s->n[m].running > 0)
                set_running(s, &s->n[m], s->n[m].running - 1, r->t);
        }
        set_running(s, n, n->running + 1, r->t);
        tk->run_node = (int32_t)i;
        n->ring[n->ring_at] = r->t;
        n->ring_at = (n->ring_at + 1) % RING;
        if (n->ring_n < RING)
            n->ring_n++;
        poll(s, i, r->t);
        break;
    case SW_END:
        if (tk->run_node >= 0) {
            size_t m = (size_t)tk->run_node;
            if (m != i)
                charge(s, m, r->t);
            if (s->n[m].running > 0)
                set_running(s, &s->n[m], s->n[m].running - 1, r->t);
            tk->run_node = -1;
            if (tk->start_ns != NO_TIME && tk->start_ns <= r->t) {
                struct snode *rn = &s->n[m];
                rn->lengths[rn->len_at] = r->t - tk->start_ns;
                rn->len_at = (rn->len_at + 1) % RING;
                if (rn->len_n < RING)
                    rn->len_n++;
            }
        } else {
            dequeue(s, tk, i, r->t); /* cancelled before it ran */
        }
        break;
    case SW_FETCH_BEGIN:
        n->fetching++;
        break;
    case SW_FETCH_END:
        if (n->fetching > 0)
            n->fetching--;
        break;
    case SW_STEAL_ASK:
        n->asking++;
        break;
    case SW_STEAL_ANSWER:
        if (n->asking > 0)
            n->asking--; /* a grant after its timeout answers nothing left */
        break;
    case SW_FAIL_BEGIN:
        /* Every node's idle slots change cause from here: charge them all first. */
        charge_all(s, r->t);
        n->dead = true;
        s->recovering++;
        break;
    case SW_FAIL_END:
        charge_all(s, r->t);
        if (s->recovering > 0)
            s->recovering--;
        break;
    case SW_LOST_BEGIN:
        set_running(s, n, n->running + 1, r->t);
        break;
    case SW_LOST_END:
        if (n->running > 0)
            set_running(s, n, n->running - 1, r->t);
        break;
    }
    struct signature now = signature_of(&s->h);
    if (now.s_one != s->sig.s_one || now.l_one != s->sig.l_one) {
        /* What "work elsewhere" means changed for every node: charge them all up to
         * here under the old meaning first. */
        charge_all(s, r->t);
        s->sig = now;
    }
}

/* ---- results ------------------------------------------------------------------------ */

static void finish_bins(struct sweep *s)
{
    struct report_analysis *a = s->a;
    double slots = 0;
    for (size_t i = 0; i < s->nn; i++)
        slots += s->n[i].slots;
    for (size_t b = 0; b < s->nbins; b++) {
        double blo = s->t0 + (double)b * s->width;
        double w = (b + 1 == s->nbins ? s->t1 : blo + s->width) - blo; /* ns */
        double busy = 0, norm = s->poll_max[b];
        for (size_t i = 0; i < s->nn; i++) {
            size_t at = b * s->nn + i;
            busy += s->busy[at];
            a->node_utilization[at] = w > 0 && s->n[i].slots ? s->busy[at] / (w * s->n[i].slots)
                                                            : 0;
            if (!s->poll_n[at] && s->ready_max[at] > norm)
                norm = s->ready_max[at];
        }
        a->bins[b].busy_slots = w > 0 ? busy / w : 0;
        a->bins[b].utilization = w > 0 && slots > 0 ? busy / (w * slots) : 0;
        /* E_b, paper 004 eq. 1-3 */
        double wmax = 0, wsum = 0;
        for (size_t i = 0; i < s->nn; i++) {
            size_t at = b * s->nn + i;
            double mean = s->poll_n[at] ? s->poll_sum[at] / s->poll_n[at]
                          : w > 0       ? s->ready_area[at] / w
                                        : 0;
            double wi = norm > 0 ? mean / norm : 0;
            wsum += wi;
            if (wi > wmax)
                wmax = wi;
        }
        double imb = s->nn ? wmax - wsum / (double)s->nn : 0;
        a->bins[b].imbalance = imb;
        a->bins[b].potential = imb * (double)s->nn;
    }
}

static void finish_audit(struct sweep *s)
{
    struct report_analysis *a = s->a;
    uint64_t audited = 0, helpful = 0, harmful = 0;
    double gain = 0;
    for (size_t k = 0; k < s->naud; k++) {
        const struct audit *au = &s->aud[k];
        const struct rtask *tk = &s->in->tasks[au->task];
        if (tk->start_ns == NO_TIME || tk->start_ns < au->t || !(au->rate > 0)) {
            a->steals_unjudged++;
            continue;
        }
        double stolen = (double)au->t / 1e9, started = (double)tk->start_ns / 1e9;
        double estimate = stolen + au->position / au->rate;
        double g = estimate - started;
        audited++;
        if (g > 0)
            helpful++;
        else
            harmful++;
        gain += g;
        /* Keep the REPORT_WORST_STEALS lowest gains, lowest first. */
        size_t at = a->nworst;
        while (at > 0 && a->worst[at - 1].gain_s > g)
            at--;
        if (at >= REPORT_WORST_STEALS)
            continue;
        size_t keep = a->nworst < REPORT_WORST_STEALS ? a->nworst : REPORT_WORST_STEALS - 1;
        memmove(&a->worst[at + 1], &a->worst[at], (keep - at) * sizeof a->worst[0]);
        if (a->nworst < REPORT_WORST_STEALS)
            a->nworst++;
        a->worst[at] = (struct report_steal){
            .task = tk->key,
            .name = tk->name_off ? a->names + tk->name_off : NULL,
            .victim = a->nodes[au->victim].id,
            .thief = au->thief >= 0 ? a->nodes[au->thief].id : -1,
            .stolen_s = stolen,
            .started_s = started,
            .estimate_s = estimate,
            .gain_s = g,
            .position = au->position,
            .victim_rate_tps = au->rate,
        };
    }
    a->figures[RF_STEALS_AUDITED] = (double)audited;
    a->figures[RF_STEALS_HELPFUL] = (double)helpful;
    a->figures[RF_STEALS_HARMFUL] = (double)harmful;
    a->figures[RF_STEAL_GAIN_S] = audited ? gain : NAN;
}

void report_sweep(struct report_analysis *a, struct sweep_input *in)
{
    struct sweep s = {.a = a, .in = in, .nn = a->nnodes, .t0 = (double)in->t0,
                      .t1 = (double)in->t1, .nbins = a->nbins};
    s.width = s.nbins ? (s.t1 - s.t0) / (double)s.nbins : 1;
    s.n = xcalloc(s.nn ? s.nn : 1, sizeof *s.n);
    s.full_at = NO_TIME;
    for (size_t i = 0; i < s.nn; i++) {
        s.full += a->nodes[i].slots > 0 ? a->nodes[i].slots : 0;
        s.n[i].slots = a->nodes[i].slots;
        s.n[i].since = in->t0;
        s.n[i].first_start = in->pn[i].first_start_ns;
        s.n[i].last_end = in->pn[i].last_end_ns;
    }
    if ((size_t)s.full > in->ntasks)
        s.full = (int64_t)in->ntasks;
    size_t cells = s.nbins * s.nn + 1;
    s.busy = xcalloc(cells, sizeof *s.busy);
    s.ready_area = xcalloc(cells, sizeof *s.ready_area);
    s.ready_max = xcalloc(cells, sizeof *s.ready_max);
    s.poll_sum = xcalloc(cells, sizeof *s.poll_sum);
    s.poll_n = xcalloc(cells, sizeof *s.poll_n);
    s.poll_max = xcalloc(s.nbins ? s.nbins : 1, sizeof *s.poll_max);
    s.sig = signature_of(&s.h);

    sort_recs(&in->recs, in->nrecs);
    for (size_t k = 0; k < in->nrecs; k++)
        apply(&s, &in->recs[k]);
    charge_all(&s, in->t1);
    a->figures[RF_RAMP_UP_S] = s.full_at == NO_TIME ? NAN : (double)(s.full_at - in->t0) / 1e9;

    finish_bins(&s);
    finish_audit(&s);
    free(s.n);
    free(s.busy);
    free(s.ready_area);
    free(s.ready_max);
    free(s.poll_sum);
    free(s.poll_n);
    free(s.poll_max);
    free(s.aud);
}

/* ---- queues over time from the samples ------------------------------------------------ */

static int cmp_sample(const void *x, const void *y)
{
    const struct sample_rec *a = x, *b = y;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    return (a->t > b->t) - (a->t < b->t);
}

void report_bin_samples(struct report_analysis *a, struct sample_rec *samples, size_t n,
                        int64_t t0)
{
    if (!a->nbins || !n)
        return;
    qsort(samples, n, sizeof *samples, cmp_sample);
    double width = a->bin_s * 1e9;
    size_t i = 0;
    while (i < n) {
        uint32_t node = samples[i].node;
        double last[3] = {0, 0, 0};
        for (size_t b = 0; b < a->nbins; b++) {
            double lo = (double)t0 + (double)b * width, hi = lo + width;
            double sum[3] = {0, 0, 0};
            size_t k = 0;
            /* samples before the window only set the carried value */
            while (i < n && samples[i].node == node &&
                   (b + 1 == a->nbins || (double)samples[i].t < hi)) {
                const struct sample_rec *s = &samples[i++];
                double v[3] = {s->waitq, s->lreadyq, s->sreadyq};
                if ((double)s->t >= lo) {
                    for (int j = 0; j < 3; j++)
                        sum[j] += v[j];
                    k++;
                }
                memcpy(last, v, sizeof last);
            }
            double m[3];
            for (int j = 0; j < 3; j++)
                m[j] = k ? sum[j] / (double)k : last[j];
            a->bins[b].waitq += m[0];
            a->bins[b].lreadyq += m[1];
            a->bins[b].sreadyq += m[2];
        }
        while (i < n && samples[i].node == node)
            i++;
    }
}
