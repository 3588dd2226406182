/*
 * fuzz_workload — libFuzzer harness for the workload parser, the other parser of
 * outside bytes (users' and generators' files).  Built by `make fuzz`, replayed over
 * tests/fuzz/corpus/workload by `make fuzz-replay` (README.md).
 *
 * Besides memory safety it checks the parser's promises: an accepted workload has a
 * topological order that respects every edge, inputs that name its objects, spread and
 * pinned placements inside any cluster that workload_check_nodes accepts, a declared
 * output made by a command that lists it and a parent of every task that reads it, and
 * writing it back (initial objects, then tasks, which declare their outputs) and parsing
 * again gives the same tasks and objects (by id: the outputs come later then), and
 * every id, cmd, duration and byte count within the documented limits; a refused one
 * comes with a cause naming the input and of bounded length, however long the strings
 * it quotes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct workload wl;
    char *cause = NULL;
    if (workload_parse(&wl, (const char *)data, size, "fuzz.jsonl", &cause) < 0) {
        check(cause && strncmp(cause, "fuzz.jsonl", 10) == 0);
        /* At most a few ids of WORKLOAD_MAX_ID bytes (a cycle's path shows nine). */
        check(strlen(cause) < 16 * WORKLOAD_MAX_ID);
        free(cause);
        return 0;
    }
    for (uint32_t i = 0; i < wl.count; i++) {
        const struct workload_task *t = &wl.tasks[i];
        check(strlen(t->id) <= WORKLOAD_MAX_ID);
        check(!t->cmd || strlen(t->cmd) <= WORKLOAD_MAX_CMD);
        check(t->duration_s >= 0 && t->duration_s <= WORKLOAD_MAX_DURATION_S);
        check(t->output_bytes <= WORKLOAD_MAX_BYTES);
    }
    for (uint32_t i = 0; i < wl.object_count; i++) {
        check(strlen(wl.objects[i].id) <= WORKLOAD_MAX_ID);
        check(wl.objects[i].bytes <= WORKLOAD_MAX_BYTES);
    }
    uint32_t *pos = calloc(wl.count, sizeof *pos);
    for (uint32_t i = 0; i < wl.count; i++)
        pos[wl.topo[i]] = i;
    for (uint32_t i = 0; i < wl.count; i++)
        for (uint32_t k = 0; k < wl.tasks[i].num_parents; k++)
            check(pos[wl.tasks[i].parents[k]] < pos[i]);
    free(pos);
    for (uint32_t i = 0; i < wl.count; i++)
        for (uint32_t k = 0; k < wl.tasks[i].num_inputs; k++) {
            uint32_t o = wl.tasks[i].inputs[k];
            check(o < wl.object_count);
            uint32_t producer = wl.objects[o].producer;
            bool parent = producer == 0;
            for (uint32_t j = 0; j < wl.tasks[i].num_parents && !parent; j++)
                parent = wl.tasks[i].parents[j] == producer - 1;
            check(parent);
        }
    for (uint32_t i = 0; i < wl.object_count; i++) {
        uint32_t producer = wl.objects[i].producer;
        check(producer <= wl.count && (producer == 0) == (wl.objects[i].file == NULL));
        bool listed = producer == 0;
        for (uint32_t k = 0; producer && k < wl.tasks[producer - 1].num_outputs; k++)
            listed = listed || wl.tasks[producer - 1].outputs[k] == i;
        check(listed && (!producer || wl.tasks[producer - 1].kind == TASK_COMMAND));
    }
    uint32_t nodes = 1 + size % 16;
    bool fits = workload_check_nodes(&wl, nodes, &cause) == 0;
    if (!fits) {
        check(cause && strncmp(cause, "fuzz.jsonl:", 11) == 0);
        free(cause);
        cause = NULL;
    }
    for (uint32_t i = 0; i < wl.object_count; i++) {
        uint32_t node = workload_object_node(&wl, i, nodes);
        check(fits ? node < nodes : node < nodes || node == WORKLOAD_NO_NODE);
    }

    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    for (uint32_t i = 0; i < wl.object_count; i++)
        check(workload_write_object(out, &wl.objects[i]) == (wl.objects[i].producer ? -EINVAL : 0));
    for (uint32_t i = 0; i < wl.count; i++)
        check(workload_write_task(out, &wl.tasks[i], &wl) == 0);
    fclose(out);
    struct workload again;
    check(workload_parse(&again, text, len, "again", &cause) == 0);
    check(again.count == wl.count);
    for (uint32_t i = 0; i < wl.count; i++) {
        check(strcmp(again.tasks[i].id, wl.tasks[i].id) == 0);
        check(again.tasks[i].kind == wl.tasks[i].kind);
        check(again.tasks[i].num_parents == wl.tasks[i].num_parents);
        check(again.tasks[i].num_inputs == wl.tasks[i].num_inputs);
        check(again.tasks[i].num_outputs == wl.tasks[i].num_outputs);
        for (uint32_t k = 0; k < wl.tasks[i].num_inputs; k++)
            check(strcmp(again.objects[again.tasks[i].inputs[k]].id,
                         wl.objects[wl.tasks[i].inputs[k]].id) == 0);
    }
    check(again.object_count == wl.object_count);
    for (uint32_t i = 0; i < wl.object_count; i++) {
        int64_t j = workload_find_object(&again, wl.objects[i].id);
        check(j >= 0);
        check(again.objects[j].bytes == wl.objects[i].bytes);
        check(again.objects[j].node == wl.objects[i].node);
        check(again.objects[j].producer == wl.objects[i].producer);
        check(!wl.objects[i].file || strcmp(again.objects[j].file, wl.objects[i].file) == 0);
    }
    workload_fini(&again);
    free(text);
    workload_fini(&wl);
    return 0;
}
