/*
 * exec_spawn — how the executor starts commands: the work directory and each task's
 * directory in it, the attributes every child gets, the split of commands made of plain
 * words (exec'd directly, as GNU make does, because the shell's start-up would halve
 * the spawn rate), and posix_spawn itself, which puts the child in the pid table.
 * Called on the loop thread by exec.c (exec_create, exec_start).
 *
 * Spawning uses posix_spawn (vfork-like, cheap even for a big daemon), not uv_spawn,
 * which forks on the loop thread (~2k/s here).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/fs.h"
#include "core/base/text.h"
#include "core/base/xalloc.h"
#include "core/runtime/exec_impl.h"

extern char **environ;

/* The variables a command is given about its task (exec.h). */
static const char *const task_vars[] = {"JACKDAW_JOB=", "JACKDAW_TASK=", "JACKDAW_NODE=",
                                        "JACKDAW_ATTEMPT=", "JACKDAW_CORES="};
#define NTASK_VARS (sizeof task_vars / sizeof task_vars[0])

void spawn_env_init(struct exec *ex)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    ex->env = xcalloc(n + NTASK_VARS + 1, sizeof *ex->env);
    ex->env_len = 0;
    for (size_t i = 0; i < n; i++) {
        bool ours = false;
        for (size_t k = 0; k < NTASK_VARS && !ours; k++)
            ours = strncmp(environ[i], task_vars[k], strlen(task_vars[k])) == 0;
        /* The daemon's own would describe another task (a daemon started by a task). */
        if (!ours)
            ex->env[ex->env_len++] = environ[i];
    }
}

char *spawn_workdir(const char *path, char **cause)
{
    char *failed = NULL;
    int rc = fs_mkdirs(path, 0700, &failed);
    if (rc < 0) {
        if (cause)
            *cause = xasprintf("cannot create work directory '%s': %s", failed, strerror(-rc));
        free(failed);
        return NULL;
    }
    char *abs = realpath(path, NULL);
    if (!abs && cause)
        *cause = xasprintf("cannot open work directory '%s': %s", path, strerror(errno));
    return abs;
}

void spawn_attr_init(posix_spawnattr_t *attr)
{
    /* Children get a clean signal state: the daemon ignores SIGPIPE and may block others,
     * and both would otherwise be inherited through exec. */
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGCHLD);
    posix_spawnattr_init(attr);
    posix_spawnattr_setsigmask(attr, &none);
    posix_spawnattr_setsigdefault(attr, &defaults);
    /* A process group per task: what a command forks ends with it (exec_group.c). */
    posix_spawnattr_setpgroup(attr, 0);
    posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                       POSIX_SPAWN_SETPGROUP);
}

/*
 * Words that mean something to dash or bash before PATH lookup: running them directly
 * would either fail (cd, export) or behave differently (exec, time, test in a script).
 * Same idea as GNU make's sh_cmds table.
 */
static const char *const shell_words[] = {
    "!",      ".",       ":",        "[[",     "]]",       "{",       "}",      "alias",
    "bg",     "break",   "builtin",  "case",   "cd",       "command", "continue", "declare",
    "do",     "done",    "elif",     "else",   "esac",     "eval",    "exec",   "exit",
    "export", "fc",      "fg",       "fi",     "for",      "function", "getopts", "hash",
    "if",     "in",      "jobs",     "let",    "local",    "login",   "logout", "popd",
    "pushd",  "read",    "readonly", "return", "select",   "set",     "shift",  "source",
    "suspend", "test",   "then",     "time",   "times",    "trap",    "type",   "typeset",
    "ulimit", "umask",   "unalias",  "unset",  "until",    "wait",    "while",  NULL,
};

static bool plain_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("-_./,:=+@% ", c) != NULL;
}

/*
 * argv for a command the shell would run as a plain word list, or NULL when it needs
 * the shell.  The words point into *buf (owned by the caller).
 */
static char **split_plain(const char *cmd, char **buf)
{
    size_t len = strlen(cmd);
    for (size_t i = 0; i < len; i++) {
        if (!plain_char(cmd[i]))
            return NULL;
    }
    const char *first = cmd + strspn(cmd, " ");
    size_t first_len = strcspn(first, " ");
    if (first_len == 0 || memchr(first, '=', first_len))
        return NULL; /* empty, or an environment assignment */
    for (const char *const *w = shell_words; *w; w++) {
        if (strlen(*w) == first_len && memcmp(*w, first, first_len) == 0)
            return NULL;
    }

    *buf = xstrdup(cmd);
    char **argv = xmalloc((len / 2 + 2) * sizeof *argv);
    size_t argc = 0;
    for (char *p = *buf;;) {
        while (*p == ' ')
            *p++ = '\0';
        if (!*p)
            break;
        argv[argc++] = p;
        p += strcspn(p, " ");
    }
    argv[argc] = NULL;
    return argv;
}

/*
 * 0 with `r` in the pid table, or an errno from posix_spawn (glibc reports the exec's or
 * a file action's failure there, since the child shares its memory until exec).
 */
static int spawn(struct exec *ex, struct run *r, const char *dir, char *const argv[],
                 bool search)
{
    /* The daemon's environment and the task's variables, in buffers on the stack. */
    char vars[NTASK_VARS][40];
    snprintf(vars[0], sizeof vars[0], "JACKDAW_JOB=%u", task_key_job(r->res.key));
    snprintf(vars[1], sizeof vars[1], "JACKDAW_TASK=%u", task_key_index(r->res.key));
    snprintf(vars[2], sizeof vars[2], "JACKDAW_NODE=%u", ex->node);
    snprintf(vars[3], sizeof vars[3], "JACKDAW_ATTEMPT=%u", r->attempt);
    snprintf(vars[4], sizeof vars[4], "JACKDAW_CORES=%u", r->cores);
    for (size_t k = 0; k < NTASK_VARS; k++)
        ex->env[ex->env_len + k] = vars[k];
    ex->env[ex->env_len + NTASK_VARS] = NULL;
    posix_spawn_file_actions_t fa;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc)
        return rc;
    /* In order: the relative "output" and "stderr" are opened inside the task directory. */
    if (!(rc = posix_spawn_file_actions_addchdir_np(&fa, dir)) &&
        !(rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) &&
        !(rc = posix_spawn_file_actions_addopen(&fa, 1, "output",
                                                O_CREAT | O_TRUNC | O_WRONLY, 0600)) &&
        /* Apart from stdout: stdout is the task's output object (data a child reads),
         * stderr its log, bounded (exec_reap.c). */
        !(rc = posix_spawn_file_actions_addopen(&fa, 2, "stderr",
                                                O_CREAT | O_TRUNC | O_WRONLY, 0600)) &&
        /* A daemon fd without O_CLOEXEC (a listening socket) must not outlive us in a
         * task that hangs on. */
        !(rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3))) {
        /* Held across the spawn so the reaper cannot meet this pid before the table does:
         * a child may exit before posix_spawn returns. */
        struct rusage self;
        r->spawn_rss = getrusage(RUSAGE_SELF, &self) == 0 && self.ru_maxrss > 0
                           ? (uint64_t)self.ru_maxrss * 1024 : 0;
        pthread_mutex_lock(&ex->mu);
        pid_t pid;
        rc = search ? posix_spawnp(&pid, argv[0], &fa, &ex->attr, argv, ex->env)
                    : posix_spawn(&pid, argv[0], &fa, &ex->attr, argv, ex->env);
        if (rc == 0) {
            r->pid = pid;
            r->in_table = true;
            table_insert(ex, r);
            ex->children++;
            ex->spawns++;
            pthread_cond_signal(&ex->wake);
        }
        pthread_mutex_unlock(&ex->mu);
    }
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

bool spawn_command(struct exec *ex, struct run *r, const char *cmd)
{
    char *error = NULL;
    if (!ex->reaper_started && reap_start(ex, &error) != 0) {
        exec_fail_start(ex, r, error);
        return false;
    }

    char dir[PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s/task-%u-%u", ex->workdir, task_key_job(r->res.key),
                     task_key_index(r->res.key));
    if (n < 0 || (size_t)n >= sizeof dir) {
        exec_fail_start(ex, r, xasprintf("cannot create task directory in '%s': name too long",
                                         ex->workdir));
        return false;
    }
    /* Owner-only, whatever the umask: a task's files are nobody else's business. */
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        exec_fail_start(ex, r, xasprintf("cannot create task directory '%s': %s", dir,
                                         strerror(errno)));
        return false;
    }

    char *buf = NULL;
    char **words = split_plain(cmd, &buf);
    char *shell_argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
    int rc;
    if (words) {
        rc = spawn(ex, r, dir, words, true);
        /* A script without "#!" runs under the shell, as it would from a terminal. */
        if (rc == ENOEXEC)
            rc = spawn(ex, r, dir, shell_argv, false);
    } else {
        rc = spawn(ex, r, dir, shell_argv, false);
    }
    if (rc != 0) {
        /* The command may be 64 KiB: quote it cut, since the reason travels to the client
         * and into its summary. */
        const char *what = words ? words[0] : cmd;
        char *shown = text_clip(what, strlen(what), TEXT_SHOWN);
        exec_fail_start(ex, r, xasprintf("cannot run '%s': %s", shown, strerror(rc)));
        free(shown);
    }
    free(words);
    free(buf);
    return rc == 0;
}
