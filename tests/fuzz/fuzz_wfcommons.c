/*
 * fuzz_wfcommons — libFuzzer harness for the WfCommons importer (core/model/wfcommons.c),
 * a parser of outside bytes: instances are downloaded from WfInstances or written by
 * other tools.  Built by `make fuzz`, replayed over tests/fuzz/corpus/wfcommons by
 * `make fuzz-replay` (README.md).  The input's length picks the scales, so that one
 * corpus covers unscaled, scaled-down and scaled-up conversions.
 *
 * Besides memory safety it checks the importer's promises: converted text is
 * NUL-terminated at the length given and workload_parse accepts it unless the
 * instance's edges hold a cycle (the one check left to the parser), as sleep tasks
 * within the limits; wfcommons_parse agrees, and its refusals name the input with no
 * line of the generated text; a refusal hands out no text and comes with a cause naming
 * the input, of bounded length however long the strings it quotes.  And a text the
 * workload parser accepts is never taken for an instance by wfcommons_detect.
 */
#include <errno.h>
#include <stdio.h>

#include "core/model/wfcommons.h"
#include "tests/fuzz/fuzz.h"

#define NAME "fuzz.json"

/* Our own messages quote at most a few strings cut to TEXT_SHOWN bytes, and jansson's
 * are shorter than 200; a cycle's path from workload_parse shows up to nine whole ids. */
#define MAX_OWN_CAUSE 1024
#define MAX_PARSE_CAUSE (16 * WORKLOAD_MAX_ID)

static const struct wfcommons_options scales[] = {
    {0, 0, NULL},
    {0.001, 0.001, NULL},
    {1e3, 1e6, NULL},
    /* Command tasks: the template takes any id, quoted. */
    {0.5, 0, "run {id} for {runtime} s; echo {id}{id}"},
};

static bool names_input(const char *cause)
{
    size_t n = strlen(NAME);
    return strncmp(cause, NAME, n) == 0 && cause[n] == ':' && cause[n + 1] == ' ';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_logs();
    const char *text = (const char *)data;
    const struct wfcommons_options *o = &scales[size % (sizeof scales / sizeof scales[0])];

    /* Content recognition never takes a workload for an instance. */
    struct workload direct;
    if (wfcommons_detect(text, size))
        check(workload_parse(&direct, text, size, "as.jsonl", NULL) < 0);

    char *out = NULL, *cause = NULL;
    size_t len = 0;
    int rc = wfcommons_to_jsonl(text, size, NAME, o, &out, &len, &cause);
    struct workload wl;
    char *parse_cause = NULL;
    int parse_rc = wfcommons_parse(&wl, text, size, NAME, o, &parse_cause);
    if (rc < 0) {
        check(!out && len == 0);
        check(cause && names_input(cause) && strlen(cause) < MAX_OWN_CAUSE);
        /* The same refusal, word for word. */
        check(parse_rc == rc && parse_cause && strcmp(parse_cause, cause) == 0);
        free(cause);
        free(parse_cause);
        return 0;
    }
    check(out && !cause && strlen(out) == len);

    char *why = NULL;
    if (workload_parse(&direct, out, len, "generated", &why) < 0) {
        check(why && strstr(why, " is on a cycle ("));
        check(parse_rc == -EINVAL && parse_cause && names_input(parse_cause));
        check(strlen(parse_cause) < MAX_PARSE_CAUSE && strstr(parse_cause, " is on a cycle ("));
        free(why);
        free(parse_cause);
        free(out);
        return 0;
    }
    check(parse_rc == 0 && !parse_cause && strcmp(wl.name, NAME) == 0);
    check(wl.count == direct.count && wl.object_count == direct.object_count);
    for (uint32_t i = 0; i < wl.count; i++) {
        const struct workload_task *t = &wl.tasks[i];
        if (o->command)
            check(t->kind == TASK_COMMAND && t->cmd && strlen(t->cmd) <= WORKLOAD_MAX_CMD &&
                  t->output_bytes == 0);
        else
            check(t->kind == TASK_SLEEP && t->duration_s >= 0 &&
                  t->duration_s <= WORKLOAD_MAX_DURATION_S);
        check(t->output_bytes <= WORKLOAD_MAX_BYTES);
        check(strcmp(t->id, direct.tasks[i].id) == 0);
    }
    for (uint32_t i = 0; i < wl.object_count; i++)
        check(wl.objects[i].node == WORKLOAD_NODE_SPREAD &&
              wl.objects[i].bytes <= WORKLOAD_MAX_BYTES);
    workload_fini(&direct);
    workload_fini(&wl);
    free(out);
    return 0;
}
