/*
 * jackdaw import — converts a workflow recorded by another system into a jackdaw
 * workload (JSON Lines): `jackdaw import wfcommons FILE [-o OUT] [--time-scale F]
 * [--data-scale F]` for WfCommons instances (WfFormat 1.5, core/model/wfcommons.h).
 * `run` and `submit` take such a file directly as well; import is for keeping the
 * converted workload, editing it, or giving it to report and bound.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/fs.h"
#include "core/base/xalloc.h"
#include "core/client/wfopts.h"
#include "core/model/wfcommons.h"
#include "core/model/workload.h"
#include "tools/cmd/cmd.h"

static int import_main(int argc, char **argv)
{
    const char *out = NULL;
    struct wfcommons_options o = {0};
    struct opt opts[] = {
        {"output", OPT_STRING, &out, "FILE  write here (default: standard output; also -o)"},
        WFOPTS_OPTS(&o),
        {NULL, 0, NULL, NULL},
    };
    static const char *const shorts[][2] = {{"-o", "--output"}};
    char **args = cmd_short_options(argc, argv, opts, shorts, 1);
    const char *pos[2];
    int npos;
    int rc = cmd_parse(&cmd_import, argc, args, opts, pos, 2, &npos);
    free(args);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (npos != 2 || strcmp(pos[0], "wfcommons") != 0) {
        fprintf(stderr, "jackdaw import: give the format and the file: import wfcommons FILE\n"
                        "usage: jackdaw import %s\n", cmd_import.usage);
        return EXIT_USAGE;
    }
    if (wfopts_finish(&o, "import"))
        return EXIT_USAGE;
    /* Converted and then parsed as run would parse it: what import writes, run takes. */
    struct workload wl;
    char *cause = NULL;
    if (wfcommons_load(&wl, pos[1], &o, &cause) < 0) {
        fprintf(stderr, "jackdaw import: %s\n", cause);
        free(cause);
        return EXIT_BAD_INPUT;
    }
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "jackdaw import: cannot write '%s': %s\n", out, strerror(errno));
        workload_fini(&wl);
        return EXIT_BAD_INPUT;
    }
    rc = 0;
    for (uint32_t k = 0; rc == 0 && k < wl.object_count; k++)
        if (!wl.objects[k].producer) /* a declared output is on its task's line */
            rc = workload_write_object(f, &wl.objects[k]);
    for (uint32_t i = 0; rc == 0 && i < wl.count; i++)
        rc = workload_write_task(f, &wl.tasks[i], &wl);
    if ((out && fclose(f) != 0) || (!out && fflush(f) != 0) || rc < 0) {
        fprintf(stderr, "jackdaw import: cannot write '%s': %s\n", out ? out : "(stdout)",
                strerror(errno));
        workload_fini(&wl);
        return EXIT_BAD_INPUT;
    }
    if (out)
        fprintf(stderr, "jackdaw import: %u tasks and %u initial objects written to %s\n",
                wl.count, wl.object_count, out);
    workload_fini(&wl);
    return 0;
}

const struct cmd cmd_import = {
    .name = "import",
    .usage = "wfcommons FILE [-o OUT.jsonl] [--time-scale F] [--data-scale F] [--command CMD]",
    .summary = "convert a WfCommons instance (WfFormat 1.5) into a workload",
    .main = import_main,
};
