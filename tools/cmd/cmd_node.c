/*
 * jackdaw node — the node daemon's command line.  Normally started by `jackdaw launch`
 * (or by the site's launcher, one per host, with a hand-written cluster file); parses
 * flags into a node_config and runs core/runtime/node until told to stop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "core/base/clock.h"
#include "core/base/fs.h"
#include "core/base/log.h"
#include "core/base/xalloc.h"
#include "core/client/dataopts.h"
#include "core/model/cluster.h"
#include "core/runtime/node.h"
#include "tools/cmd/cmd.h"
#include "trace/tracer/tracer.h"

/* The spool file's header says whose events it holds, so `trace merge` can tell. */
static char *spool_header(const struct cluster *cl, uint32_t id)
{
    json_t *h = json_pack("{s:i, s:s?, s:I, s:{s:i}}", "format", 1, "run_id", cl->run_id,
                          "start_ns", (json_int_t)cl->start_ns, "spool", "node", (int)id);
    char *s = h ? json_dumps(h, JSON_COMPACT) : NULL;
    json_decref(h);
    return s;
}

/* Trace memory a host's daemons share by default: each gets its part, between 4 MiB
 * and the tracer's 32 MiB.  The ring is touched whole at start (its page faults must not
 * land on the scheduler later), so 128 local daemons at 32 MiB each zeroed 4 GiB before
 * the cluster was up: most of its 4-5 s start.  A daemon among many on one host also
 * sees a share of the events, so a smaller ring absorbs the same bursts. */
#define HOST_TRACE_BYTES (256u << 20)
#define NODE_TRACE_MIN (4u << 20)

static size_t default_ring(const struct cluster *cl, uint32_t id)
{
    const char *host = NULL;
    for (uint32_t i = 0; i < cl->count; i++)
        if (cl->nodes[i].id == id)
            host = cl->nodes[i].host;
    uint32_t here = 0;
    for (uint32_t i = 0; host && i < cl->count; i++)
        here += strcmp(cl->nodes[i].host, host) == 0;
    size_t share = here > 1 ? HOST_TRACE_BYTES / here : TRACER_DEFAULT_RING_BYTES;
    return share < NODE_TRACE_MIN ? NODE_TRACE_MIN
           : share > TRACER_DEFAULT_RING_BYTES ? TRACER_DEFAULT_RING_BYTES : share;
}

static int start_tracer(const struct cluster *cl, const struct node_config *cfg,
                        struct tracer **out, char **cause)
{
    char *spool = xasprintf("%s/trace-spool.avro", cfg->workdir);
    char *header = spool_header(cl, cfg->id);
    int rc = fs_mkdirs(cfg->workdir, 0700, NULL);
    if (rc < 0) {
        *cause = xasprintf("cannot create work directory '%s': %s", cfg->workdir, strerror(-rc));
    } else {
        struct tracer_config tc = {
            .node = (int32_t)cfg->id, .host = cl->collector.host, .port = cl->collector.port,
            .key = cfg->key, .run_id = cl->run_id,
            .start_ns = cl->start_ns ? cl->start_ns : clock_wall_ns(), .spool_path = spool,
            .header_json = header,
            .ring_bytes = cfg->trace_buffer ? cfg->trace_buffer : default_ring(cl, cfg->id),
        };
        rc = tracer_start(out, &tc, cause);
    }
    free(spool);
    free(header);
    return rc;
}

static int node_main(int argc, char **argv)
{
    const char *cluster_path = NULL, *workdir = NULL, *level = "info", *bind = NULL;
    unsigned long id = 0, slots = 0, seed = 0;
    long listen_fd = -1;
    double speed = 0;
    bool have_id = false;
    struct dataopts data = {0};
    struct opt opts[] = {
        DATAOPTS_OPTS(&data),
        {"cluster", OPT_STRING, &cluster_path, "FILE  cluster file (membership, key)"},
        {"id", OPT_UINT, &id, "I  this node's id in the cluster file"},
        {"slots", OPT_UINT, &slots, "N  executor slots (default: from the cluster file)"},
        {"speed", OPT_DOUBLE, &speed, "F  speed factor in (0,1] (default: from the cluster file)"},
        {"listen-fd", OPT_INT, &listen_fd, "FD  inherited listening socket"},
        {"bind", OPT_STRING, &bind,
         "ADDR  listen on ADDR (e.g. 0.0.0.0) at the cluster file's port (default: its host)"},
        {"workdir", OPT_STRING, &workdir, "DIR  task work directories (default: WORKDIR/node-I)"},
        {"seed", OPT_UINT, &seed, "S  victim-selection seed"},
        {"log-level", OPT_STRING, &level, "L  debug | info | warn | error"},
        {NULL, 0, NULL, NULL},
    };
    const char *pos[1];
    int npos;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--id") == 0 || strncmp(argv[i], "--id=", 5) == 0)
            have_id = true;
    int rc = cmd_parse(&cmd_node, argc, argv, opts, pos, 0, &npos);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!cluster_path || !have_id) {
        fprintf(stderr, "jackdaw node: --cluster and --id are required\n");
        return EXIT_USAGE;
    }
    int lvl = log_level_parse(level);
    if (lvl < 0) {
        fprintf(stderr, "jackdaw node: unknown log level '%s'\n", level);
        return EXIT_USAGE;
    }
    log_set_level((enum log_level)lvl);
    char tag[32];
    snprintf(tag, sizeof tag, "node%lu", id);
    log_set_tag(tag);

    struct cluster cl;
    char *cause = NULL;
    if (cluster_load(&cl, cluster_path, &cause) < 0) {
        fprintf(stderr, "jackdaw node: %s\n", cause);
        free(cause);
        return EXIT_BAD_INPUT;
    }
    if (id >= cl.count) {
        fprintf(stderr, "jackdaw node: --id %lu but the cluster file '%s' has %u nodes\n", id,
                cluster_path, cl.count);
        cluster_fini(&cl);
        return EXIT_USAGE;
    }
    struct node_config cfg = {
        .id = (uint32_t)id, .cluster = &cl, .listen_fd = (int)listen_fd, .bind = bind, .seed = seed,
        .slots = slots ? (uint32_t)slots : cl.nodes[id].slots,
        .speed = speed > 0 ? speed : cl.nodes[id].speed, .steal_timeout_ms = 1000,
    };
    if (bind && listen_fd >= 0) {
        fprintf(stderr, "jackdaw node: give --bind or --listen-fd, not both\n");
        cluster_fini(&cl);
        return EXIT_USAGE;
    }
    if (cfg.speed <= 0 || cfg.speed > 1) {
        fprintf(stderr, "jackdaw node: --speed %g is not in (0, 1]\n", cfg.speed);
        cluster_fini(&cl);
        return EXIT_USAGE;
    }
    if (dataopts_apply(&data, &cfg, &cause) < 0) {
        fprintf(stderr, "jackdaw node: %s\n", cause);
        free(cause);
        cluster_fini(&cl);
        return EXIT_USAGE;
    }
    char *wd = workdir ? xstrdup(workdir) : xasprintf("%s/node-%lu", cl.workdir, id);
    cfg.workdir = wd;
    rc = auth_key_load(cl.key_path, &cfg.key, &cause);
    /* A cluster with a collector is a traced cluster. */
    struct tracer *tracer = NULL;
    struct trace_sink sink;
    if (rc == 0 && cl.collector.host[0]) {
        rc = start_tracer(&cl, &cfg, &tracer, &cause);
        if (rc == 0) {
            tracer_sink(tracer, &sink);
            cfg.trace = &sink;
        }
    }
    if (rc == 0)
        rc = node_run(&cfg, &cause);
    /* It logs its own account once it has placed its last event. */
    tracer_stop(tracer, 3000);
    int code = 0;
    if (rc < 0) {
        fprintf(stderr, "jackdaw node %lu: %s\n", id, cause ? cause : "failed");
        code = EXIT_CLUSTER;
    }
    free(cause);
    free(wd);
    cluster_fini(&cl);
    return code;
}

const struct cmd cmd_node = {
    .name = "node",
    .usage = "--cluster FILE --id I [options]",
    .summary = "run one node daemon (normally started by launch or run)",
    .main = node_main,
};
