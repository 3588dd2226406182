/*
 * steal — the adaptive work-stealing policy of MATRIX (paper 000 §III.A, paper 002
 * §2.2.1) as pure functions: the ready-only starvation test, ceil(sqrt(N)) random
 * victims (or one, for the classic baseline, or K), rob the most loaded, take half, and
 * an exponential back-off poll interval that parks the thief at its bound and widens
 * the victim set after runs of failures.  Also the names of the policy space's parts;
 * the PaRSEC parts (successors, chunk, single, the waiting-time guard) are in parsec.c,
 * the A2WS ones in a2ws.c, and the baselines' in lw.c (leader/workers) and ctws.c (the
 * cyclic token).
 *
 * Owns nothing: every call works on the caller's structs and random state.  Called by
 * core/runtime's stealer on a node's loop thread, by core/sim for every simulated node
 * (which also reads the victims' draws backwards: steal_draw_rank, steal_draw_find), by
 * tests/unit/test_progress.c for every node of its fake network, and by
 * tests/unit/test_steal.c.  No I/O, no clock, no globals, no allocation: the loop thread
 * may call steal_pick_victims on every idle turn, so it must be cheap and must not fail.
 */
#include "core/policy/steal.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/vector.h"
#include "core/policy/parsec.h"

/*
 * The seen-set for rejection sampling lives on the stack so that picking victims never
 * allocates.  Rejection serves only the exact draws, below STEAL_DRAW_MIXED_MIN
 * candidates (the keyed permutation takes over there), where k <= m / 4 is under 256;
 * the table is kept at load 1/8 or less, so 2,048 slots, 8 KiB.  It was 32 KiB, sized
 * for draws the permutation now makes, and overflowed the SimGrid engine's 32 KiB actor
 * stacks (a thief drawing from 24 nodes or more died of SIGSEGV).
 */
#define REJECTION_MAX_K (STEAL_DRAW_MIXED_MIN / 4)
#define SEEN_SLOTS (8 * REJECTION_MAX_K)
#define SEEN_EMPTY UINT32_MAX

static const char *const mode_names[] = {
    [STEAL_ADAPTIVE] = "adaptive",
    [STEAL_RANDOM1] = "random1",
    [STEAL_NONE] = "none",
};

void steal_params_default(struct steal_params *p)
{
    if (!p)
        return;
    p->mode = STEAL_ADAPTIVE;
    p->amount = STEAL_AMOUNT_HALF;
    p->starvation = STEAL_STARVE_READY;
    p->victims = STEAL_VICTIMS_SQRT;
    p->info = STEAL_INFO_LOAD_QUERY;
    p->victims_k = 1;
    p->chunk = 20; /* paper 004: half of its 40 workers */
    p->radius = 0;
    p->wait_guard = false;
    p->neighbours = 0;
    p->poll_initial_ms = 1.0;
    p->poll_max_ms = 50000.0;
    p->widen_after = 3;
    p->widen_by = 2;
}

int steal_mode_parse(const char *name)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++) {
        if (strcmp(name, mode_names[i]) == 0)
            return (int)i;
    }
    return -1;
}

/* Never NULL, so that callers can print a corrupted mode in a log line as it is. */
const char *steal_mode_name(enum steal_mode mode)
{
    if ((unsigned)mode < sizeof mode_names / sizeof mode_names[0])
        return mode_names[mode];
    return "unknown";
}

static const char *const starvation_names[] = {
    [STEAL_STARVE_READY] = "ready",
    [STEAL_STARVE_SUCCESSORS] = "ready+successors",
    [STEAL_STARVE_PREEMPTIVE] = "preemptive",
};
static const char *const victims_names[] = {
    [STEAL_VICTIMS_SQRT] = "sqrt",
    [STEAL_VICTIMS_RANDOM] = "random",
    [STEAL_VICTIMS_A2WS] = "a2ws",
    [STEAL_VICTIMS_TOKEN] = "token",
    [STEAL_VICTIMS_LEADER] = "leader",
};
static const char *const amount_names[] = {
    [STEAL_AMOUNT_HALF] = "half",
    [STEAL_AMOUNT_CHUNK] = "chunk",
    [STEAL_AMOUNT_SINGLE] = "single",
    [STEAL_AMOUNT_A2WS] = "a2ws",
};
static const char *const info_names[] = {
    [STEAL_INFO_LOAD_QUERY] = "load-query",
    [STEAL_INFO_RING] = "ring",
    [STEAL_INFO_TOKEN] = "token",
};

#define NAME_OF(table, v) \
    ((unsigned)(v) < sizeof table / sizeof table[0] ? table[v] : "unknown")

static int lookup(const char *const *table, size_t n, const char *text)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(text, table[i]) == 0)
            return (int)i;
    return -1;
}

/* "NAME:K" with K a whole number >= 1; 0 and *k set, or -EINVAL. */
static int parse_bounded(const char *text, const char *name, uint32_t *k)
{
    size_t len = strlen(name);
    if (strncmp(text, name, len) != 0 || text[len] != ':')
        return -EINVAL;
    const char *num = text + len + 1;
    char *end;
    if (*num < '1' || *num > '9')
        return -EINVAL;
    unsigned long v = strtoul(num, &end, 10);
    if (*end || v == 0 || v > UINT32_MAX)
        return -EINVAL;
    *k = (uint32_t)v;
    return 0;
}

int steal_parse_starvation(const char *text, struct steal_params *p)
{
    int i = text ? lookup(starvation_names, sizeof starvation_names / sizeof starvation_names[0], text) : -1;
    if (i < 0 || !p)
        return -EINVAL;
    p->starvation = (enum steal_starvation)i;
    return 0;
}

int steal_parse_victims(const char *text, struct steal_params *p)
{
    uint32_t k;
    if (!text || !p)
        return -EINVAL;
    if (strcmp(text, "sqrt") == 0) {
        p->victims = STEAL_VICTIMS_SQRT;
    } else if (strcmp(text, "a2ws") == 0) {
        p->victims = STEAL_VICTIMS_A2WS;
    } else if (strcmp(text, "token") == 0) {
        p->victims = STEAL_VICTIMS_TOKEN;
    } else if (strcmp(text, "leader") == 0) {
        p->victims = STEAL_VICTIMS_LEADER;
    } else if (parse_bounded(text, "random", &k) == 0) {
        p->victims = STEAL_VICTIMS_RANDOM;
        p->victims_k = k;
    } else {
        return -EINVAL;
    }
    return 0;
}

int steal_parse_amount(const char *text, struct steal_params *p)
{
    uint32_t k;
    if (!text || !p)
        return -EINVAL;
    if (strcmp(text, "half") == 0) {
        p->amount = STEAL_AMOUNT_HALF;
    } else if (strcmp(text, "single") == 0) {
        p->amount = STEAL_AMOUNT_SINGLE;
    } else if (strcmp(text, "a2ws") == 0) {
        p->amount = STEAL_AMOUNT_A2WS;
    } else if (parse_bounded(text, "chunk", &k) == 0) {
        p->amount = STEAL_AMOUNT_CHUNK;
        p->chunk = k;
    } else {
        return -EINVAL;
    }
    return 0;
}

int steal_parse_info(const char *text, struct steal_params *p)
{
    int i = text ? lookup(info_names, sizeof info_names / sizeof info_names[0], text) : -1;
    if (i < 0 || !p)
        return -EINVAL;
    p->info = (enum steal_info)i;
    return 0;
}

const char *steal_starvation_name(enum steal_starvation s)
{
    return NAME_OF(starvation_names, s);
}

const char *steal_victims_name(enum steal_victims v)
{
    return NAME_OF(victims_names, v);
}

const char *steal_amount_name(enum steal_amount_kind a)
{
    return NAME_OF(amount_names, a);
}

const char *steal_info_name(enum steal_info i)
{
    return NAME_OF(info_names, i);
}

bool steal_needs_ring(const struct steal_params *p)
{
    return p && (p->starvation == STEAL_STARVE_PREEMPTIVE || p->victims == STEAL_VICTIMS_A2WS ||
                 p->amount == STEAL_AMOUNT_A2WS);
}

bool steal_keeps_vector(const struct steal_params *p, uint32_t nodes)
{
    return p && nodes > 1 && p->mode != STEAL_NONE &&
           (p->info == STEAL_INFO_RING || steal_needs_ring(p));
}

int steal_check_parts(const struct steal_params *p, const char **why)
{
    const char *w = NULL;
    if (!p) {
        w = "no parameters";
    } else if (p->victims == STEAL_VICTIMS_TOKEN && p->info != STEAL_INFO_TOKEN) {
        w = "--victims token reads the CTWS token's counts: it needs --info token";
    } else if (p->info == STEAL_INFO_TOKEN && p->victims != STEAL_VICTIMS_TOKEN) {
        w = "--info token feeds only --victims token (only the token's holder steals)";
    } else if ((p->victims == STEAL_VICTIMS_TOKEN || p->victims == STEAL_VICTIMS_LEADER) &&
               steal_needs_ring(p)) {
        /* Preemptive starts and the A2WS amount read the ring's vector, which neither the
         * token nor the leader keeps current. */
        w = p->victims == STEAL_VICTIMS_TOKEN
                ? "--victims token cannot take --starvation preemptive or --amount a2ws"
                : "--victims leader cannot take --starvation preemptive or --amount a2ws";
    }
    if (w) {
        if (why)
            *why = w;
        return -EINVAL;
    }
    return 0;
}

/* Exact integer ceil(sqrt(n)): the victim count must not depend on libm rounding. */
static uint32_t ceil_sqrt(uint32_t n)
{
    uint64_t lo = 0, hi = 65536; /* 65536^2 > UINT32_MAX, so the answer is below */

    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (mid * mid >= n)
            hi = mid;
        else
            lo = mid + 1;
    }
    return (uint32_t)lo;
}

/*
 * How many victims a thief asks before any widening.  A mode outside the enum (a
 * corrupted or newer config) steals nothing rather than guessing at a policy.
 */
static uint32_t base_neighbours(const struct steal_params *p, uint32_t nodes)
{
    uint32_t others = nodes ? nodes - 1 : 0;
    uint32_t k;

    switch (p->mode) {
    case STEAL_ADAPTIVE:
        if (p->victims == STEAL_VICTIMS_RANDOM)
            k = p->victims_k ? p->victims_k : 1;
        else if (p->victims == STEAL_VICTIMS_SQRT)
            k = p->neighbours ? p->neighbours : ceil_sqrt(nodes);
        else
            return 0; /* A2WS, token, leader: the victim is named, not drawn */
        break;
    case STEAL_RANDOM1:
        k = 1;
        break;
    case STEAL_NONE:
    default:
        return 0;
    }
    return k < others ? k : others;
}

/*
 * A start that is not positive (or NaN) would never grow by doubling, so the thief
 * would poll in a tight loop and never park; use the paper's 1 ms instead.
 */
static double initial_ms(const struct steal_params *p)
{
    return p->poll_initial_ms > 0 ? p->poll_initial_ms : 1.0;
}

/* A bound below the start means "park after the first failure". */
static double max_ms(const struct steal_params *p)
{
    double start = initial_ms(p);
    return p->poll_max_ms >= start ? p->poll_max_ms : start;
}

void steal_state_init(struct steal_state *s, const struct steal_params *p, uint32_t nodes)
{
    if (!s || !p)
        return;
    memset(s, 0, sizeof *s);
    s->interval_ms = initial_ms(p);
    s->base_neighbours = base_neighbours(p, nodes);
    s->neighbours = s->base_neighbours;
    s->parked = false;
}

bool steal_starving(const struct steal_params *p, const struct steal_self *self)
{
    if (!p || !self)
        return false;
    if (p->mode != STEAL_ADAPTIVE && p->mode != STEAL_RANDOM1)
        return false;
    if (self->arriving)
        return false;
    struct parsec_self ps = {
        .ready = self->lready + self->sready, .free_slots = self->free_slots,
        .running_successors = self->running_successors,
    };
    /* Preemptive stealing still starves like ready-only when the node has nothing to
     * run; its earlier start is the A2WS plan's decision (core/policy/a2ws). */
    return parsec_starving(p->starvation == STEAL_STARVE_SUCCESSORS, &ps);
}

uint64_t steal_rng_next(uint64_t *state)
{
    assert(state);
    uint64_t x = *state;
    /* Zero is xorshift's fixed point: every draw would be 0 and rejection sampling
     * would never finish, so a zero state is reseeded rather than trusted. */
    if (x == 0)
        x = UINT64_C(0x9E3779B97F4A7C15);
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * UINT64_C(0x2545F4914F6CDD1D);
}

/*
 * Uniform in [0, bound), bound >= 1.  Plain modulo would favour small values by up
 * to 2^-32; rejecting the lowest 2^64 mod bound draws removes the bias, and a
 * rejection happens with probability below 2^-32.
 */
static uint32_t uniform_below(uint64_t *rng, uint32_t bound)
{
    uint64_t threshold = (UINT64_C(0) - bound) % bound;

    for (;;) {
        uint64_t r = steal_rng_next(rng);
        if (r >= threshold)
            return (uint32_t)(r % bound);
    }
}

/*
 * Draws k distinct values of [0, m) by rejection, in the order drawn (a uniform random
 * k-permutation).  The caller keeps k <= m / 4, so a draw is rejected with probability
 * at most 1/4 and the expected cost is under 4k/3 draws.  The budget only guards
 * against a pathological generator: when it runs out the caller falls back to
 * selection sampling, so the function always terminates.
 */
static bool pick_by_rejection(uint64_t *rng, uint32_t m, uint32_t k, uint32_t *out)
{
    uint32_t seen[SEEN_SLOTS];
    uint32_t slots = 16;
    unsigned bits = 4;
    uint64_t budget = (uint64_t)k * 64 + 64;
    uint32_t got = 0;

    assert(k <= REJECTION_MAX_K && 4 * k <= SEEN_SLOTS);
    /* A sparse table: the first probe almost always finds the slot empty, where at
     * load 1/2 the probing loop's branches mispredicted often enough to take a third of
     * the draw's time (sqrt(N) victims an attempt, at 10^5 nodes in the simulator).
     * The table only finds repeats: its size does not change what is drawn. */
    while (slots < SEEN_SLOTS && slots < 8 * k) {
        slots *= 2;
        bits++;
    }
    memset(seen, 0xff, slots * sizeof seen[0]);
    /* The state in a local: stored through `rng` it was reloaded on every draw. */
    uint64_t state = *rng;
    while (got < k) {
        if (budget-- == 0) {
            *rng = state;
            return false;
        }
        uint32_t c = uniform_below(&state, m);
        /* Fibonacci hashing: consecutive node ids spread over the table. */
        uint32_t h = (c * UINT32_C(0x9E3779B1)) >> (32 - bits);
        while (seen[h] != SEEN_EMPTY && seen[h] != c)
            h = (h + 1) & (slots - 1);
        if (seen[h] == c)
            continue;
        seen[h] = c;
        out[got++] = c;
    }
    *rng = state;
    return true;
}

/*
 * Draws k distinct values of [0, m), 1 <= k <= m, by selection sampling (Knuth's
 * Algorithm S) and then shuffles them.  It costs O(m) draws and no memory, so it is
 * used when k is a large fraction of m, where O(m) is O(k) anyway.
 */
static void pick_by_selection(uint64_t *rng, uint32_t m, uint32_t k, uint32_t *out)
{
    uint32_t got = 0;

    for (uint32_t c = 0; c < m && got < k; c++) {
        if (uniform_below(rng, m - c) < k - got)
            out[got++] = c;
    }
    assert(got == k);
    /* Algorithm S yields ascending ids; the victims must come in random order because
     * steal_choose_victim breaks ties in favour of the first asked. */
    for (uint32_t i = k - 1; i > 0; i--) {
        uint32_t j = uniform_below(rng, i + 1);
        uint32_t t = out[i];
        out[i] = out[j];
        out[j] = t;
    }
}

/* splitmix64's finaliser: the key's words for the permutation's constants. */
static uint64_t key_word(uint64_t key, unsigned i)
{
    uint64_t z = key + (uint64_t)(i + 1) * UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* a * inv = 1 mod 2^32 for odd a: Newton's step doubles the correct low bits, from the
 * three that a * a = 1 mod 8 gives. */
static uint32_t inverse_odd(uint32_t a)
{
    uint32_t y = a;
    for (int i = 0; i < 4; i++)
        y *= 2 - a * y;
    return y;
}

/*
 * An adaptive thief whose neighbour count is 0 (its state was set up while it was
 * alone) still asks one victim once peers exist, so that a grown cluster is not left
 * without stealing until a success that can never come.  When `self` is not below
 * `nodes`, every node is a candidate.
 */
uint32_t steal_draw_begin(const struct steal_params *p, const struct steal_state *s,
                          uint32_t self, uint32_t nodes, uint64_t *rng, uint32_t max,
                          struct steal_draw *d)
{
    uint32_t k;

    if (!p || !s || !rng || !d || max == 0)
        return 0;
    switch (p->mode) {
    case STEAL_ADAPTIVE:
        if (p->victims == STEAL_VICTIMS_A2WS || p->victims == STEAL_VICTIMS_TOKEN ||
            p->victims == STEAL_VICTIMS_LEADER)
            return 0;
        if (p->victims == STEAL_VICTIMS_RANDOM)
            k = p->victims_k ? p->victims_k : 1;
        else
            k = s->neighbours ? s->neighbours : 1;
        break;
    case STEAL_RANDOM1:
        k = 1;
        break;
    case STEAL_NONE:
    default:
        return 0;
    }

    /* Sample over the m candidates numbered without self, then shift ids at or above
     * self up by one: self can never be drawn, so nothing is rejected for it. */
    bool skip_self = self < nodes;
    uint32_t m = skip_self ? nodes - 1 : nodes;
    if (k > m)
        k = m;
    if (k > max)
        k = max;
    if (k == 0)
        return 0;

    steal_draw_make(d, steal_rng_next(rng), self, nodes, k);
    return k;
}

void steal_draw_make(struct steal_draw *d, uint64_t key, uint32_t self, uint32_t nodes,
                     uint32_t k)
{
    assert(d);
    bool skip_self = self < nodes;
    uint32_t m = skip_self ? nodes - 1 : nodes;
    *d = (struct steal_draw){.key = key, .m = m, .k = k < m ? k : m,
                             .self = skip_self ? self : UINT32_MAX,
                             .mixed = m >= STEAL_DRAW_MIXED_MIN};
    if (d->mixed) {
        unsigned bits = 1;
        while (bits < 32 && (UINT64_C(1) << bits) < m)
            bits++;
        d->mask = (uint32_t)((UINT64_C(1) << bits) - 1);
        d->shift = (uint8_t)((bits + 1) / 2);
        for (unsigned r = 0; r < 3; r++) {
            uint64_t w = key_word(d->key, r);
            d->perm.mul[r] = (uint32_t)w | 1;
            d->perm.add[r] = (uint32_t)(w >> 32);
            d->inv[r] = inverse_odd(d->perm.mul[r]);
        }
    }
}

/* A candidate's node id: ids at or above self move up by one. */
static uint32_t node_of(const struct steal_draw *d, uint32_t c)
{
    return c + (c >= d->self);
}

/* The permutation's reverse, one pass over [0, 2^bits). */
static inline uint32_t perm_unapply(const struct steal_draw *d, uint32_t x)
{
    x ^= x >> d->shift;
    x = (x * d->inv[2] - d->perm.add[2]) & d->mask;
    x ^= x >> d->shift;
    x = (x * d->inv[1] - d->perm.add[1]) & d->mask;
    x ^= x >> d->shift;
    x = (x * d->inv[0] - d->perm.add[0]) & d->mask;
    return x;
}

uint32_t steal_draw_victim(const struct steal_draw *d, uint32_t i)
{
    assert(d && d->mixed && i < d->k);
    uint32_t x = i;
    do
        x = perm_unapply(d, x);
    while (x >= d->m);
    return node_of(d, x);
}

/* The ranks' and the victims' blocks: a fixed count, which lets gcc -O2 vectorize the
 * passes over them. */
#define RANK_BLOCK 128

/*
 * The victims drawn at from .. from + RANK_BLOCK - 1 (past k: filler), as nodes: the
 * reverse applied to the whole block, then again to the lanes still past m, until none
 * is; branch-free passes the compiler vectorizes (cloned as find_in_block is).
 */
VECTOR_CLONES
static void victims_block(const struct steal_draw *d, uint32_t from, uint32_t *restrict out)
{
    const struct steal_draw dd = *d;
    uint32_t past = 0;
    for (uint32_t i = 0; i < RANK_BLOCK; i++) {
        /* Past k the lanes are filler, started at 0: a start past m could lie on a cycle
         * that never comes back below m. */
        out[i] = perm_unapply(&dd, from + i < dd.k ? from + i : 0);
        past |= out[i] >= dd.m;
    }
    while (past) {
        past = 0;
        for (uint32_t i = 0; i < RANK_BLOCK; i++) {
            uint32_t y = perm_unapply(&dd, out[i]);
            out[i] = out[i] >= dd.m ? y : out[i];
            past |= out[i] >= dd.m;
        }
    }
    for (uint32_t i = 0; i < RANK_BLOCK; i++)
        out[i] += out[i] >= dd.self;
}

void steal_draw_all(const struct steal_draw *d, uint32_t *out)
{
    assert(d && out);
    if (d->mixed) {
        uint32_t block[RANK_BLOCK];
        for (uint32_t from = 0; from < d->k; from += RANK_BLOCK) {
            victims_block(d, from, block);
            uint32_t len = d->k - from < RANK_BLOCK ? d->k - from : RANK_BLOCK;
            memcpy(out + from, block, len * sizeof out[0]);
        }
        return;
    }
    uint64_t state = d->key;
    if (d->k <= REJECTION_MAX_K && (uint64_t)d->k * 4 <= d->m) {
        if (!pick_by_rejection(&state, d->m, d->k, out))
            pick_by_selection(&state, d->m, d->k, out);
    } else {
        pick_by_selection(&state, d->m, d->k, out);
    }
    /* Without a branch: half the ids are above self at random, and a branch here
     * mispredicted on every other victim. */
    if (d->self != UINT32_MAX) {
        for (uint32_t i = 0; i < d->k; i++)
            out[i] += out[i] >= d->self;
    }
}

uint32_t steal_draw_rank(const struct steal_draw *d, uint32_t node)
{
    assert(d);
    if (node == d->self || node - (node > d->self) >= d->m)
        return UINT32_MAX;
    if (d->mixed) {
        uint32_t r = steal_perm_rank(&d->perm, node - (node > d->self), d->m, d->mask,
                                     d->shift);
        return r < d->k ? r : UINT32_MAX;
    }
    /* Below the mixed size the draw is made again: m < 1024, so k is too. */
    uint32_t out[STEAL_DRAW_MIXED_MIN];
    steal_draw_all(d, out);
    for (uint32_t i = 0; i < d->k; i++)
        if (out[i] == node)
            return i;
    return UINT32_MAX;
}

/*
 * Of one block of nodes, those drawn: their indices in the block into at[], their ranks
 * into ranks[]; returns how many.  The permutation is applied to the whole block at
 * once, then again to the lanes still past m (cycle-walking) until none is: every pass
 * is branch-free over the block, and cloned for AVX-512 and AVX2, where a vector
 * multiplies 16 or 8 32-bit lanes at once (the baseline's SSE2 has no such instruction;
 * the CPU picks the clone at load time).  The drawn are few (k of m), so the last loop's branch is
 * predicted.
 */
VECTOR_CLONES
static uint32_t find_in_block(struct steal_perm perm, uint32_t m, uint32_t k, uint32_t self,
                              uint32_t mask, unsigned shift, const uint32_t *restrict nodes,
                              uint32_t *restrict at, uint32_t *restrict ranks)
{
    uint32_t x[RANK_BLOCK];
    uint32_t past = 0, hit = 0;
    for (uint32_t i = 0; i < RANK_BLOCK; i++) {
        /* A node that is no candidate (self when it is the last, one past the nodes)
         * starts at 0 and is dropped below: a start past m could lie on a cycle that
         * never comes back below m. */
        uint32_t u = nodes[i], c = u - (u > self);
        x[i] = steal_perm_apply(&perm, c < m ? c : 0, mask, shift);
        past |= x[i] >= m;
    }
    while (past) {
        past = 0;
        for (uint32_t i = 0; i < RANK_BLOCK; i++) {
            uint32_t y = steal_perm_apply(&perm, x[i], mask, shift);
            x[i] = x[i] >= m ? y : x[i];
            past |= x[i] >= m;
        }
    }
    for (uint32_t i = 0; i < RANK_BLOCK; i++)
        hit |= x[i] < k;
    /* Most blocks hold none of the k drawn (of m): the lanes are looked at one by one
     * only in a block that does. */
    if (!hit)
        return 0;
    uint32_t found = 0;
    for (uint32_t i = 0; i < RANK_BLOCK; i++) {
        if (x[i] < k) {
            uint32_t u = nodes[i];
            at[found] = i;
            ranks[found] = x[i];
            found += u != self && u - (u > self) < m;
        }
    }
    return found;
}

uint32_t steal_draw_find(const struct steal_draw *d, const uint32_t *nodes, uint32_t n,
                         uint32_t *at, uint32_t *ranks)
{
    assert(d && (nodes || !n) && (at || !n) && (ranks || !n));
    uint32_t found = 0;
    if (!d->mixed) {
        for (uint32_t i = 0; i < n; i++) {
            uint32_t r = steal_draw_rank(d, nodes[i]);
            if (r != UINT32_MAX) {
                at[found] = i;
                ranks[found++] = r;
            }
        }
        return found;
    }
    uint32_t block[RANK_BLOCK], bat[RANK_BLOCK], branks[RANK_BLOCK];
    for (uint32_t from = 0; from < n; from += RANK_BLOCK) {
        uint32_t len = n - from < RANK_BLOCK ? n - from : RANK_BLOCK;
        const uint32_t *in = nodes + from;
        if (len < RANK_BLOCK) {
            /* Padded with self, which is never drawn (or, when self is not a node, with
             * ids past the candidates). */
            memcpy(block, in, len * sizeof block[0]);
            for (uint32_t i = len; i < RANK_BLOCK; i++)
                block[i] = d->self;
            in = block;
        }
        uint32_t got = find_in_block(d->perm, d->m, d->k, d->self, d->mask, d->shift, in,
                                     bat, branks);
        for (uint32_t j = 0; j < got; j++) {
            at[found] = from + bat[j];
            ranks[found++] = branks[j];
        }
    }
    return found;
}

uint32_t steal_pick_victims(const struct steal_params *p, const struct steal_state *s,
                            uint32_t self, uint32_t nodes, uint64_t *rng, uint32_t *out,
                            uint32_t max)
{
    struct steal_draw d;

    if (!out)
        return 0;
    uint32_t k = steal_draw_begin(p, s, self, nodes, rng, max, &d);
    if (k)
        steal_draw_all(&d, out);
    return k;
}

int steal_choose_victim(const uint32_t *loads, uint32_t n)
{
    int best = -1;
    uint32_t best_load = 0;

    if (!loads)
        return -1;
    if (n > (uint32_t)INT_MAX)
        n = (uint32_t)INT_MAX;
    /* Strictly greater: ties stay with the lowest index and all-zero loads leave -1. */
    for (uint32_t i = 0; i < n; i++) {
        if (loads[i] > best_load) {
            best_load = loads[i];
            best = (int)i;
        }
    }
    return best;
}

uint32_t steal_amount(const struct steal_params *p, uint32_t available)
{
    if (!p)
        return parsec_amount(STEAL_AMOUNT_HALF, 0, available);
    if (p->amount == STEAL_AMOUNT_A2WS)
        return available;
    return parsec_amount(p->amount, p->chunk, available);
}

uint32_t steal_grant(const struct steal_params *p, uint32_t stealable, uint32_t max)
{
    uint32_t want = p && p->amount == STEAL_AMOUNT_A2WS && !max
                        ? parsec_amount(STEAL_AMOUNT_HALF, 0, stealable)
                        : steal_amount(p, stealable);
    return max && want > max ? max : want;
}

uint32_t steal_keep(uint32_t free_slots, uint32_t lready_startable, uint32_t sready_startable)
{
    if (free_slots <= lready_startable)
        return 0;
    uint32_t want = free_slots - lready_startable;
    return want < sready_startable ? want : sready_startable;
}

uint32_t steal_load_free_slots(const struct steal_load *l)
{
    uint32_t held = l->busy + l->staged_slots + (l->window == 0 ? l->staging : 0);
    return held < l->slots ? l->slots - held : 0;
}

struct steal_self steal_load_self(const struct steal_load *l)
{
    struct steal_self s = {
        .lready = l->lready,
        .sready = l->sready,
        .free_slots = steal_load_free_slots(l),
        .running_successors = l->running_successors,
        .arriving = l->arriving,
    };
    uint32_t with_data = (l->lready - l->lready_zero) + (l->sready - l->sready_zero);
    if (l->window && with_data <= l->window) {
        s.lready = l->lready_zero;
        s.sready = l->sready_zero;
    }
    return s;
}

uint32_t steal_load_giveable(const struct steal_load *l)
{
    uint32_t keep = steal_keep(steal_load_free_slots(l), l->lready_zero, l->sready_zero);
    return l->sready > keep ? l->sready - keep : 0;
}

void steal_on_result(const struct steal_params *p, struct steal_state *s, bool success,
                     uint32_t nodes)
{
    uint32_t others = nodes ? nodes - 1 : 0;

    if (!p || !s)
        return;
    if (success) {
        /* Recomputed rather than copied from the stored base: the membership may have
         * changed since steal_state_init. */
        s->base_neighbours = base_neighbours(p, nodes);
        s->neighbours = s->base_neighbours;
        s->failures = 0;
        s->interval_ms = initial_ms(p);
        s->parked = false;
        return;
    }

    if (s->failures < UINT32_MAX)
        s->failures++;
    /* The first failure waits the initial interval, so the waits run 1, 2, 4, ... ms
     * as in the paper; reaching the bound parks the thief instead of polling at it
     * forever, which is what cuts the useless steals at the end of a run. */
    if (s->failures == 1)
        s->interval_ms = initial_ms(p);
    else
        s->interval_ms *= 2;
    if (!(s->interval_ms < max_ms(p))) {
        s->interval_ms = max_ms(p);
        s->parked = true;
    }

    /* Only sqrt victims widen: random1 and random:K are fixed-size baselines. */
    if (p->mode == STEAL_ADAPTIVE && p->victims == STEAL_VICTIMS_SQRT && p->widen_after > 0 &&
        s->failures % p->widen_after == 0) {
        uint64_t wider = (uint64_t)s->neighbours + p->widen_by;
        s->neighbours = wider < others ? (uint32_t)wider : others;
    }
    if (s->neighbours > others)
        s->neighbours = others;
}

/*
 * Widened neighbours go back to the base count.  Widening answered a run of failures
 * in a cluster that has since changed (a peer now has ready tasks), so the thief
 * restarts exactly as after a success; if the small set fails again, it widens again
 * after widen_after failures.  The call resets a thief that is not parked too: news of
 * fresh work is a reason to try soon whatever the back-off had reached.
 */
void steal_on_wake(const struct steal_params *p, struct steal_state *s)
{
    if (!p || !s)
        return;
    s->parked = false;
    s->failures = 0;
    s->interval_ms = initial_ms(p);
    s->neighbours = s->base_neighbours;
}
