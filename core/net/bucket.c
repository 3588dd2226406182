/*
 * bucket — token bucket arithmetic and the bandwidth and latency parsers (see
 * bucket.h).
 *
 * Owns nothing.  Called by the node runtime for every emulated transfer chunk and by
 * the command-line parsers.  Numbers are scanned by hand, not with strtod, because
 * strtod follows LC_NUMERIC (a console that calls setlocale would read "0.5ms" as 0)
 * and accepts hex, "inf" and "nan", none of which belong in a bandwidth.
 */
#include "core/net/bucket.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base/xalloc.h"

int bucket_init(struct bucket *b, double rate_bytes_per_s, double burst_bytes)
{
    if (!b || !isfinite(rate_bytes_per_s) || !isfinite(burst_bytes) || rate_bytes_per_s < 0 ||
        burst_bytes < 0)
        return -EINVAL;
    b->rate = rate_bytes_per_s;
    b->burst = burst_bytes;
    b->tokens = burst_bytes;
    b->last_ns = 0;
    b->started = false;
    return 0;
}

int64_t bucket_reserve(struct bucket *b, int64_t now_ns, uint64_t bytes)
{
    if (b->rate <= 0)
        return 0;
    if (!b->started) {
        b->started = true;
        b->last_ns = now_ns;
    } else if (now_ns > b->last_ns) {
        /* Unsigned difference: exact even when the two stamps are far apart. */
        uint64_t dt = (uint64_t)now_ns - (uint64_t)b->last_ns;
        b->tokens += (double)dt * b->rate / 1e9;
        if (b->tokens > b->burst)
            b->tokens = b->burst;
        b->last_ns = now_ns;
    }
    b->tokens -= (double)bytes;
    if (b->tokens >= 0)
        return 0;
    /* Rounded up: releasing a chunk a fraction of a ns early would let the emulated
     * link run faster than its rate over many chunks. */
    double wait = ceil(-b->tokens * 1e9 / b->rate);
    return wait >= 9.2e18 ? INT64_MAX : (int64_t)wait;
}

/* ---- parsing -------------------------------------------------------------------- */

static void set_cause(char **cause, char *msg)
{
    if (cause)
        *cause = msg;
    else
        free(msg);
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A decimal number as mantissa * 10^exp10, so durations stay exact. */
struct decimal {
    uint64_t mantissa;
    int exp10;
};

/* Scans digits, an optional fraction and an optional exponent; returns the first
 * character after the number, or NULL when there is no digit.  Digits past what a
 * u64 holds are dropped (integer ones still scale the exponent): 19 significant
 * digits are more than any rate or duration has. */
static const char *scan_decimal(const char *p, struct decimal *d)
{
    uint64_t m = 0;
    int e = 0;
    bool any = false;
    for (; is_digit(*p); p++) {
        any = true;
        if (m <= (UINT64_MAX - 9) / 10)
            m = m * 10 + (uint64_t)(*p - '0');
        else
            e++;
    }
    if (*p == '.') {
        for (p++; is_digit(*p); p++) {
            any = true;
            if (m <= (UINT64_MAX - 9) / 10) {
                m = m * 10 + (uint64_t)(*p - '0');
                e--;
            }
        }
    }
    if (!any)
        return NULL;
    /* An exponent only when digits follow: otherwise the 'e' belongs to what comes
     * next (and is then refused as a unit). */
    if ((*p == 'e' || *p == 'E') &&
        (is_digit(p[1]) || ((p[1] == '+' || p[1] == '-') && is_digit(p[2])))) {
        p++;
        int sign = 1;
        if (*p == '+' || *p == '-')
            sign = *p++ == '-' ? -1 : 1;
        int x = 0;
        for (; is_digit(*p); p++)
            if (x < 100000)
                x = x * 10 + (*p - '0');
        e += sign * x;
    }
    d->mantissa = m;
    d->exp10 = e;
    return p;
}

static const char *skip_spaces(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Length of s without trailing blanks. */
static size_t trimmed_len(const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return n;
}

struct rate_unit {
    const char *name;       /* compared case-insensitively */
    double bytes_per_s;
    bool per_s_allowed;     /* may be followed by "/s" */
};

static const struct rate_unit rate_units[] = {
    {"bit", 1.0 / 8, true},     {"kbit", 1e3 / 8, true},       {"mbit", 1e6 / 8, true},
    {"gbit", 1e9 / 8, true},    {"tbit", 1e12 / 8, true},      {"bps", 1.0 / 8, false},
    {"kbps", 1e3 / 8, false},   {"mbps", 1e6 / 8, false},      {"gbps", 1e9 / 8, false},
    {"tbps", 1e12 / 8, false},  {"b", 1, true},                {"kb", 1e3, true},
    {"mb", 1e6, true},          {"gb", 1e9, true},             {"tb", 1e12, true},
    {"kib", 1024.0, true},      {"mib", 1048576.0, true},      {"gib", 1073741824.0, true},
    {"tib", 1099511627776.0, true},
};

/* "b", "Kb", "gb" …: networking writes Gb for gigabits, storage for gigabytes; an
 * 8x mistake in a bandwidth is worse than asking. */
static bool ambiguous_bits_or_bytes(const char *unit, size_t n)
{
    if (n >= 2 && unit[n - 2] == '/' && (unit[n - 1] == 's' || unit[n - 1] == 'S'))
        n -= 2;
    if (n == 1)
        return unit[0] == 'b';
    return n == 2 && strchr("kKmMgGtT", unit[0]) && unit[1] == 'b';
}

int bucket_parse_rate(const char *text, double *bytes_per_s, char **cause)
{
    if (!text || !bytes_per_s) {
        set_cause(cause, xstrdup("no rate given"));
        return -EINVAL;
    }
    const char *p = skip_spaces(text);
    size_t len = trimmed_len(p);
    if ((len == 3 && !strncasecmp(p, "off", 3)) || (len == 9 && !strncasecmp(p, "unlimited", 9))) {
        *bytes_per_s = 0;
        return 0;
    }
    if (*p == '-') {
        set_cause(cause, xasprintf("invalid rate '%s': must not be negative", text));
        return -EINVAL;
    }
    struct decimal d;
    const char *unit = scan_decimal(p, &d);
    if (!unit) {
        set_cause(cause, xasprintf("invalid rate '%s': expected a number and a unit such as "
                                   "10Gbit, 100Mbit, 125MB or 1GiB", text));
        return -EINVAL;
    }
    unit = skip_spaces(unit);
    size_t unit_len = len - (size_t)(unit - p);
    double factor = 1;
    if (unit_len > 0) {
        if (ambiguous_bits_or_bytes(unit, unit_len)) {
            set_cause(cause, xasprintf("invalid rate '%s': '%.*s' could mean bits or bytes; "
                                       "write Gbit (bits per second) or GB (bytes per second)",
                                       text, (int)unit_len, unit));
            return -EINVAL;
        }
        size_t base_len = unit_len;
        bool per_s = base_len > 2 && unit[base_len - 2] == '/' &&
                     (unit[base_len - 1] == 's' || unit[base_len - 1] == 'S');
        if (per_s)
            base_len -= 2;
        const struct rate_unit *found = NULL;
        for (size_t i = 0; i < sizeof rate_units / sizeof rate_units[0]; i++)
            if (strlen(rate_units[i].name) == base_len &&
                !strncasecmp(unit, rate_units[i].name, base_len) &&
                (!per_s || rate_units[i].per_s_allowed))
                found = &rate_units[i];
        if (!found) {
            set_cause(cause, xasprintf("invalid rate '%s': unknown unit '%.*s' (use bit, Kbit, "
                                       "Mbit, Gbit, B, KB, MB, GB, KiB, MiB or GiB)",
                                       text, (int)unit_len, unit));
            return -EINVAL;
        }
        factor = found->bytes_per_s;
    }
    double v = (double)d.mantissa;
    if (d.exp10 >= 0)
        v *= pow(10, d.exp10);
    else
        /* Division by an exact power of ten keeps "0.5" exactly one half. */
        v /= pow(10, -d.exp10);
    v *= factor;
    if (!isfinite(v)) {
        set_cause(cause, xasprintf("invalid rate '%s': out of range", text));
        return -ERANGE;
    }
    *bytes_per_s = v;
    return 0;
}

struct duration_unit {
    const char *name;       /* compared exactly: "ms" and "Ms" are not the same thing */
    int exp10;              /* ns per unit as a power of ten */
};

static const struct duration_unit duration_units[] = {
    {"ns", 0}, {"us", 3}, {"\xc2\xb5s", 3}, {"ms", 6}, {"s", 9},
};

int bucket_parse_duration(const char *text, int64_t *ns, char **cause)
{
    if (!text || !ns) {
        set_cause(cause, xstrdup("no duration given"));
        return -EINVAL;
    }
    const char *p = skip_spaces(text);
    size_t len = trimmed_len(p);
    if (*p == '-') {
        set_cause(cause, xasprintf("invalid duration '%s': must not be negative", text));
        return -EINVAL;
    }
    struct decimal d;
    const char *unit = scan_decimal(p, &d);
    if (!unit) {
        set_cause(cause, xasprintf("invalid duration '%s': expected a number and a unit such "
                                   "as 200us, 1ms or 0.5ms", text));
        return -EINVAL;
    }
    unit = skip_spaces(unit);
    size_t unit_len = len - (size_t)(unit - p);
    int exp10;
    if (unit_len == 0) {
        /* A bare number could mean seconds or milliseconds; only zero is the same in
         * every unit. */
        if (d.mantissa != 0) {
            set_cause(cause, xasprintf("invalid duration '%s': missing unit (ns, us, ms or s)",
                                       text));
            return -EINVAL;
        }
        exp10 = 0;
    } else {
        const struct duration_unit *found = NULL;
        for (size_t i = 0; i < sizeof duration_units / sizeof duration_units[0]; i++)
            if (strlen(duration_units[i].name) == unit_len &&
                !strncmp(unit, duration_units[i].name, unit_len))
                found = &duration_units[i];
        if (!found) {
            set_cause(cause, xasprintf("invalid duration '%s': unknown unit '%.*s' (use ns, us, "
                                       "ms or s)", text, (int)unit_len, unit));
            return -EINVAL;
        }
        exp10 = found->exp10;
    }
    uint64_t m = d.mantissa;
    int k = d.exp10 + exp10;
    uint64_t v;
    if (m == 0) {
        v = 0;
    } else if (k >= 0) {
        v = m;
        for (; k > 0; k--) {
            if (v > (uint64_t)INT64_MAX / 10)
                goto range;
            v *= 10;
        }
    } else if (k < -19) {
        v = 0; /* m < 2e19, so m / 10^20 is below one half */
    } else {
        uint64_t div = 1;
        for (; k < 0; k++)
            div *= 10;
        v = m / div;
        if (m % div >= div - m % div)
            v++;
    }
    if (v > (uint64_t)INT64_MAX)
        goto range;
    *ns = (int64_t)v;
    return 0;
range:
    set_cause(cause, xasprintf("invalid duration '%s': out of range", text));
    return -ERANGE;
}
