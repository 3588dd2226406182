/*
 * wfcommons — imports a WfCommons workflow instance (WfFormat 1.5, the JSON of
 * https://github.com/wfcommons/wfformat) as a workload: the real executions of
 * WfInstances become DAGs of sleep tasks with their measured runtimes and file sizes.
 *
 * Owns nothing past a call: the converted text it returns belongs to the caller.
 * Meant for the client commands run and submit, which recognise an instance by its
 * content (wfcommons_detect); called today by the unit tests and the fuzz harness
 * (tests/unit/test_wfcommons.c, tests/fuzz/fuzz_wfcommons.c).  Pure conversion: the
 * instance becomes JSON Lines text (workload.h), and workload_parse checks that text
 * as it checks any workload, so one parser holds the workload's rules.
 *
 * Mapping.
 *   - Only schemaVersion "1.5" is accepted: older instances keep tasks, files and
 *     runtimes elsewhere (wfformat's tools/wfcommons-migrate-instance.py converts them).
 *   - Each workflow.specification.tasks[] entry becomes a task line, in the file's
 *     order: {"id", "kind":"sleep", "duration_s", "parents", "inputs", "output_bytes"};
 *     with a command template (wfcommons_options.command), {"id", "kind":"command",
 *     "cmd", "parents", "inputs"}.
 *     duration_s is runtimeInSeconds * time_scale, from the workflow.execution.tasks[]
 *     entry with the same id (joined on id, never by position); 0 stays 0.
 *   - Edges come from `parents`; `children` must mirror them exactly (a one-sided edge
 *     is refused, naming both tasks), since a file whose two lists disagree was not
 *     written by a WfCommons tool and guessing which list is right would hide that.
 *   - A file (workflow.specification.files[], {id, sizeInBytes}) that some task reads
 *     (inputFiles) and no task writes (outputFiles) is an initial object: an object
 *     line {"object", "bytes": round(sizeInBytes * size_scale)}, placed by spreading
 *     (no "node" key), listed in each reader's "inputs".  A file a task writes counts
 *     in that task's output_bytes: round(the sum of its outputFiles' sizes *
 *     size_scale).  A file listed but never used is ignored.
 *   - Known approximation: the model has one output object per task, and a child reads
 *     its parents' whole outputs.  A child that reads only some of a parent's files
 *     moves more bytes than it did in the trace; a task reading a file written by a task
 *     that is not its parent gets neither the edge nor the bytes.  (In the WfInstances
 *     files checked, the parents are exactly the file-derived edges.)
 *   - Task and object ids share one namespace in a workload, so an initial file whose
 *     id is a task's is refused (written files never become ids, so theirs may clash).
 *     None of the eight instances the tests load (../shared/workloads/wfcommons) has a
 *     clash at all: Pegasus and Makeflow name tasks NAME_IDnnnnnnn and files by their
 *     names, Nextflow files by their work-directory paths; so ids are kept as they are,
 *     with no prefix, and a workload's messages name the instance's own ids.
 *   - execution.tasks[].coreCount becomes the task's cores, rounded up (a task wider than
 *     every node is then refused at submission).  Not modelled yet: the machines, the
 *     command, avgCPU and the I/O counters.  Keys this conversion does not
 *     read are ignored wherever they are (the schema allows extra keys, and Nextflow
 *     writes some).  The fields it reads are required, with their schema types, except
 *     files, inputFiles and outputFiles, which the schema lets an instance leave out;
 *     fields the schema requires but nothing here reads (the task's and the instance's
 *     name, executedAt, makespanInSeconds) are not checked.
 *
 * Errors read "FILE: reason", "FILE: task 'ID': reason" or "FILE: file 'ID': reason",
 * quoting outside strings cut to TEXT_SHOWN bytes (core/base/text.h); the generated
 * text's line numbers never show.  The conversion refuses everything workload_parse
 * would refuse in its output (ids, limits, duplicates, degrees, byte sums) except a
 * cycle, which workload_parse finds and names.
 *
 * Return convention (core/): 0, or a negative errno with *cause set to an owned string.
 */
#ifndef JACKDAW_WFCOMMONS_H
#define JACKDAW_WFCOMMONS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/model/workload.h"

/* The largest instance file wfcommons_load reads: far beyond the largest WfInstances
 * file (tens of MB), yet a bound on what a wrong path (a disk image, /dev/zero) costs
 * before jansson, which needs several times the text in memory, even starts. */
#define WFCOMMONS_MAX_FILE (256u << 20)

struct wfcommons_options {
    double time_scale;   /* multiplies every runtime (0 means 1.0); e.g. 0.001 */
    double size_scale;   /* multiplies every file size (0 means 1.0), rounded to whole bytes */
    /* NULL: sleep tasks.  Else every task is a command task running this template, in
     * which "{runtime}" stands for its scaled runtime in seconds and "{id}" for its id,
     * quoted for the shell ("sleep {runtime}" runs real processes of the recorded
     * lengths; a script of the user's can do the task's real work).  Its output is what
     * it writes, not its recorded files' sizes. */
    const char *command;
};

/*
 * Whether `text` looks like a WfCommons instance (a JSON object with "workflow" and
 * "schemaVersion" among its top-level keys) rather than JSON Lines.  Cheap: it scans
 * the first object's keys without building anything and stops once both are seen.
 */
bool wfcommons_detect(const char *text, size_t len);

/*
 * Converts an instance into the JSON Lines workload format (workload.h): owned text in
 * *out (NUL-terminated, *out_len bytes; NULL on failure), objects first, then tasks in
 * the instance's order.  `name` labels errors; `o` may be NULL (both scales 1).
 */
int wfcommons_to_jsonl(const char *text, size_t len, const char *name,
                       const struct wfcommons_options *o, char **out, size_t *out_len,
                       char **cause);

/*
 * Converts an instance held in memory and parses the result with workload_parse into
 * *wl (wl->name is `name`).  For callers that read the text already to recognise it.
 * Errors of either step read "NAME: …".
 */
int wfcommons_parse(struct workload *wl, const char *text, size_t len, const char *name,
                    const struct wfcommons_options *o, char **cause);

/*
 * Reads FILE (at most WFCOMMONS_MAX_FILE bytes), converts it and parses the result
 * into *wl (wl->name is FILE).  Errors of either step read "FILE: …"; a file that
 * cannot be read, "cannot open 'FILE': …" as workload_load says it.
 */
int wfcommons_load(struct workload *wl, const char *path, const struct wfcommons_options *o,
                   char **cause);

/*
 * Loads a workload file as run and submit take it: a WfCommons instance, recognised by
 * the top-level keys at its head, converted with `o`; anything else read as JSON Lines
 * (workload_load; "-" is standard input), which `o`'s scales do not apply to: scales
 * other than 1 with a JSON Lines file are refused, naming it.
 */
int wfcommons_load_any(struct workload *wl, const char *path, const struct wfcommons_options *o,
                       char **cause);

#endif
