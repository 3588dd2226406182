/*
 * agent — the remote side of a many-host launch (`jackdaw agent`, run on each host by
 * core/client/remote.c through ssh, a wrapper or srun; never by hand).  It talks to
 * the launcher over its standard input and output, so that the cluster key never
 * appears on a command line:
 *
 *   launcher -> agent   key HEX                       the cluster key (64 hex digits)
 *   agent -> launcher   jackdaw-agent ready id=I addr=A port=P slots=S host=H
 *                       (a listening socket is bound: the launcher now knows where)
 *   launcher -> agent   cluster LEN, then LEN bytes   the cluster file (every node)
 *   agent -> launcher   jackdaw-agent started id=I pid=P
 *
 * Then it writes the key (mode 0600) and the cluster file under its work directory
 * as node-I.key and node-I.json, and starts `jackdaw node` with the bound socket: in a
 * session of its own, the agent exiting at once (a remote shell returns), or in its
 * own place with `exec` (srun: Slurm keeps a step's processes only while its tasks
 * run).  Standard input ending before the cluster file came means the launch was
 * abandoned: the agent exits and leaves nothing running.  Any line on standard output
 * that does not start with "jackdaw-agent " is not the agent's (a login banner).
 * Return convention: 0 or a negative errno with *cause.
 */
#ifndef JACKDAW_AGENT_H
#define JACKDAW_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum agent_slots {
    AGENT_SLOTS_CORES,      /* the host's online cores */
    AGENT_SLOTS_SLURM_NODE, /* SLURM_CPUS_ON_NODE (else the cores) */
    AGENT_SLOTS_SLURM_TASK, /* SLURM_CPUS_PER_TASK (else 1) */
};

struct agent_options {
    uint32_t id;            /* the node's id, unless slurm_id */
    bool slurm_id;          /* the id is SLURM_PROCID */
    const char *addr;       /* the address others reach the node at; "auto": this host's
                               address (its name resolved, else the one routing out) */
    const char *bind;       /* the address it listens on; NULL: addr */
    int port;               /* 0: any free port */
    const char *workdir;    /* created if missing */
    const char *log_level;  /* NULL: info */
    bool exec;              /* become the daemon instead of detaching it */
    bool collector;         /* start the collector (`launch --collector HOST`), not a
                               node: its files are collector.key, .json and .log, its line
                               says id=collector */
    const char *workload_name, *workload_digest; /* the collector's trace header; NULL */
    enum agent_slots slots;
    int timeout_s;          /* for the whole exchange with the launcher; 0: 120 */
};

/* A line the launcher read from an agent's remote shell. */
enum agent_line_kind {
    AGENT_LINE_OTHER = 0,   /* not the agent's (a banner, srun's chatter): ignored */
    AGENT_LINE_READY,       /* id, addr, port, slots, host */
    AGENT_LINE_STARTED,     /* id, pid */
    AGENT_LINE_BAD = -1,    /* starts like the agent's but is not right */
};

/* The id of the collector's agent in its lines. */
#define AGENT_ID_COLLECTOR UINT32_MAX

struct agent_line {
    uint32_t id;            /* a node's id, or AGENT_ID_COLLECTOR */
    char addr[64];          /* numeric */
    int port;               /* 1..65535 */
    uint32_t slots;         /* 1..100000 */
    char host[256];         /* may be "" */
    int pid;
};

/* Parses one line (no newline); for AGENT_LINE_BAD *cause says what is wrong. */
enum agent_line_kind agent_parse_line(const char *line, struct agent_line *out, char **cause);

/* Runs the exchange and starts the daemon; with exec, returns only on failure. */
int agent_run(const struct agent_options *o, char **cause);

/* This host's address for others to reach, as "auto" finds it (a numeric string in
 * out); 0 or a negative errno. */
int agent_auto_address(char *out, size_t len);

#endif
