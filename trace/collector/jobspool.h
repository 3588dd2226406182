/*
 * jobspool — a job's trace records (its JOB_SUBMIT and TASK_NAMES) kept in a file while
 * the collector is away, for the collector to write once it is back.
 *
 * A client that cannot hand a job to the collector (none listens, or the connection was
 * lost before the collector said the records were written) writes them to
 * DIR/job-JOB.jsonl, DIR being WORKDIR/trace-jobs of the cluster: a first line
 * {"job", "tasks", "name", "digest", "mode"} and then one line per task, its id as a
 * JSON string, in task order.  "mode" (the submission mode, core/model/submit_mode.h)
 * is absent from the files of clients that came before it, and then not recorded.  The file is written under a temporary name and renamed, so a
 * reader never sees half of one.  The collector takes these files when it starts and
 * every few seconds after, writes what its trace lacks and removes each file once that
 * is written; the trace, not the file, says what is already recorded, so a job recorded
 * before a crash is not recorded twice.
 *
 * Owns nothing beyond a call.  Called by trace/collector/tclient.c (keep) and
 * trace/collector/collector.c (list, read).  Return convention: 0 or a negative errno
 * with *cause (malloc'd, naming the file).
 */
#ifndef JACKDAW_TRACE_JOBSPOOL_H
#define JACKDAW_TRACE_JOBSPOOL_H

#include <stddef.h>
#include <stdint.h>

struct jobspool_job {
    uint32_t job;
    uint32_t tasks;     /* ids holds this many */
    char *name;         /* owned; NULL when unknown */
    char *digest;       /* owned; NULL when unknown */
    char *mode;         /* owned; NULL when not recorded, else a mode's name */
    char **ids;         /* owned, each owned */
};

/* WORKDIR/trace-jobs (malloc'd). */
char *jobspool_dir(const char *workdir);

/* Writes DIR/job-JOB.jsonl (DIR is created, mode 0700; the file is 0600).  ids holds
 * `tasks` strings; name, digest and mode may be NULL (mode "" too: not recorded).
 * *path (malloc'd) names the file. */
int jobspool_keep(const char *dir, uint32_t job, uint32_t tasks, const char *name,
                  const char *digest, const char *mode, const char *const *ids, char **path,
                  char **cause);

/* The kept files of DIR (malloc'd array of malloc'd paths, sorted); none when DIR does
 * not exist.  Names other than job-N.jsonl (temporaries, set-aside files) are skipped. */
int jobspool_list(const char *dir, char ***paths, size_t *n, char **cause);
void jobspool_list_free(char **paths, size_t n);

/* Reads one kept file.  -EBADMSG with a cause naming the file and the line when it is
 * not one (bad JSON, a job of 0, a mode that is not a mode's name, fewer or more ids than
 * tasks, an id that is not a string). */
int jobspool_read(const char *path, struct jobspool_job *out, char **cause);
void jobspool_job_fini(struct jobspool_job *j);

#endif
