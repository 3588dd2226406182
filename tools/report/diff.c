/*
 * report diff — see diff.h.
 */
#include "tools/report/diff.h"

#include <math.h>
#include <string.h>

static const struct {
    enum report_figure figure;
    bool judged;
} shown[] = {
    {RF_EFFICIENCY, true},       {RF_MAKESPAN_S, true},    {RF_THROUGHPUT_TPS, false},
    {RF_UTILIZATION, false},     {RF_IDLE_CORE_S, false},  {RF_TASKS_DONE, false},
    {RF_TASKS_STOLEN, false},    {RF_BYTES_MOVED, false},
};

void report_diff(const struct report_analysis *a, const struct report_analysis *b,
                 double tolerance_pct, struct report_diff *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof shown / sizeof shown[0] && i < REPORT_DIFF_MAX_ITEMS; i++) {
        struct report_diff_item *it = &out->items[out->n++];
        enum report_figure f = shown[i].figure;
        it->figure = f;
        it->a = a->figures[f];
        it->b = b->figures[f];
        it->judged = shown[i].judged;
        it->change_pct = isfinite(it->a) && isfinite(it->b) && it->a != 0
                             ? (it->b - it->a) / fabs(it->a) * 100
                             : NAN;
        if (!it->judged || !isfinite(it->a))
            continue; /* no baseline, nothing to regress from */
        if (!isfinite(it->b)) {
            it->regressed = true; /* B lost a figure A had: an empty or broken run */
        } else {
            /* How much worse, in percent of A, whichever way is worse; from a zero
             * baseline any step the wrong way is infinitely worse. */
            double drop = report_figure_info(f)->sense == REPORT_HIGHER_BETTER
                              ? it->a - it->b
                              : it->b - it->a;
            double worse = it->a != 0 ? drop / fabs(it->a) * 100 : drop > 0 ? INFINITY : 0;
            it->regressed = worse > tolerance_pct;
        }
        out->regressed |= it->regressed;
    }
}
