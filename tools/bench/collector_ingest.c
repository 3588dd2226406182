/*
 * collector_ingest — how many events per second one `jackdaw collector` takes in from
 * N nodes.  Run by tools/bench/trace.sh (or by hand); prints figures, judges nothing.
 *
 *   collector_ingest JACKDAW [--nodes 8] [--events 250000]
 *
 * It starts a real collector (the binary given, on loopback, with a fresh key and
 * cluster file in a temporary directory), encodes each fake node's events into
 * container blocks up front (so the figure is the collector's, not the encoder's), then
 * connects N authenticated node connections and sends every block as fast as the
 * acknowledgements allow.  The clock runs from the first block sent to the last ACK
 * received, i.e. until every event is in the file.  Afterwards the file is read back and
 * its record count checked against what was sent.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uv.h>

#include "core/base/clock.h"
#include "core/base/xalloc.h"
#include "core/model/cluster.h"
#include "core/net/auth.h"
#include "core/net/conn.h"
#include "core/net/proto.h"
#include "trace/format/block.h"
#include "trace/format/reader.h"
#include "trace/format/wire.h"

struct blk {
    int64_t first, last;
    uint32_t count, len;
    uint8_t *data;
};

struct fake {
    uint32_t id;
    struct conn_hub *hub;
    struct conn *conn;
    uint8_t sync[TRACE_SYNC_SIZE];
    struct blk *blocks;
    size_t nblocks, next;
    int64_t acked;          /* next_seq the collector acknowledged */
    int64_t total;
    bool resumed;
};

static int pending_nodes;
static int64_t t_first, t_last;

/* A realistic mix: per task submit, ready, queued, start, end; a sample every 200. */
static void make_blocks(struct fake *f, int64_t events)
{
    struct trace_block *b;
    if (trace_block_create(&b, 0) < 0)
        exit(2);
    size_t cap = 0;
    int64_t seq = 0, t = 0;
    uint64_t task = (uint64_t)f->id << 20;
    int64_t first = 0;
    while (seq < events) {
        struct trace_event ev;
        static const enum trace_kind cycle[] = {TRACE_TASK_SUBMIT, TRACE_TASK_READY,
                                                TRACE_TASK_QUEUED_SHARED, TRACE_TASK_START,
                                                TRACE_TASK_END};
        enum trace_kind k = seq % 200 == 199 ? TRACE_NODE_SAMPLE : cycle[seq % 5];
        trace_event_init(&ev, k, (int32_t)f->id);
        ev.seq = seq;
        t += 1000 + (seq * 7919) % 4000;
        ev.time_ns = t;
        if (k != TRACE_NODE_SAMPLE)
            ev.task = task + (uint64_t)(seq / 5);
        if (k == TRACE_TASK_END)
            ev.status = 3;
        if (k == TRACE_NODE_SAMPLE) {
            ev.sample.slots = 8;
            ev.sample.busy = (int32_t)(seq % 9);
            ev.sample.ended = seq / 5;
            ev.sample.busy_ns = t;
        }
        int rc = trace_block_append(b, &ev);
        if (rc == -ENOSPC || seq + 1 == events) {
            if (rc == 0)
                seq++;
            const uint8_t *data;
            size_t len;
            uint32_t count = (uint32_t)trace_block_count(b);
            trace_block_finish(b, f->sync, &data, &len);
            f->blocks = xgrow(f->blocks, &cap, f->nblocks + 1, sizeof *f->blocks);
            struct blk *x = &f->blocks[f->nblocks++];
            x->first = first;
            x->last = seq - 1;
            x->count = count;
            x->len = (uint32_t)len;
            x->data = xmalloc(len);
            memcpy(x->data, data, len);
            first = seq;
            continue;
        }
        if (rc < 0)
            exit(2);
        seq++;
    }
    f->total = events;
    trace_block_destroy(b);
}

static void pump(struct fake *f)
{
    while (f->resumed && f->conn && f->next < f->nblocks &&
           conn_pending_bytes(f->conn) < (4u << 20)) {
        struct blk *x = &f->blocks[f->next++];
        if (!t_first)
            t_first = clock_mono_ns();
        size_t at;
        struct wbuf *w = conn_msg_begin(f->conn, MSG_TRACE_BLOCK, &at);
        struct wire_block wb = {.first_seq = x->first, .last_seq = x->last, .count = x->count,
                                .data = x->data, .len = x->len};
        wire_put_block(w, &wb);
        conn_msg_end(f->conn, at);
    }
}

static void on_ready(struct conn *c)
{
    struct fake *f = conn_hub_data(conn_hub_of(c));
    struct wire_hello h;
    memset(&h, 0, sizeof h);
    snprintf(h.run_id, sizeof h.run_id, "ingest");
    memcpy(h.sync, f->sync, TRACE_SYNC_SIZE);
    size_t at;
    struct wbuf *w = conn_msg_begin(c, MSG_TRACE_HELLO, &at);
    wire_put_hello(w, &h);
    conn_msg_end(c, at);
}

static int on_message(struct conn *c, uint16_t type, struct rbuf *r, const char **reason)
{
    struct fake *f = conn_hub_data(conn_hub_of(c));
    int64_t next;
    if ((type != MSG_TRACE_RESUME && type != MSG_TRACE_ACK) || wire_get_next_seq(r, &next) < 0) {
        *reason = "unexpected message";
        return -EPROTO;
    }
    if (type == MSG_TRACE_RESUME)
        f->resumed = true;
    bool was_done = f->acked >= f->total;
    f->acked = next;
    if (!was_done && f->acked >= f->total) {
        t_last = clock_mono_ns();
        pending_nodes--;
    }
    pump(f);
    return 0;
}

static void on_close(struct conn *c, const char *reason)
{
    struct fake *f = conn_hub_data(conn_hub_of(c));
    if (c == f->conn) {
        fprintf(stderr, "collector_ingest: node %u connection closed: %s\n", f->id,
                reason ? reason : "");
        f->conn = NULL;
    }
}

static void on_prepare(uv_prepare_t *h)
{
    struct fake *fakes = h->data;
    for (int i = 0; fakes[i].hub; i++) /* the array ends with an empty entry */
        pump(&fakes[i]);
}

static int rm_entry(const char *p, const struct stat *s, int fl, struct FTW *ftw)
{
    (void)s, (void)fl, (void)ftw;
    return remove(p);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: collector_ingest JACKDAW [--nodes N] [--events E]\n");
        return 2;
    }
    const char *jackdaw = argv[1];
    int nodes = 8;
    long events = 250000;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--nodes"))
            nodes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--events"))
            events = atol(argv[i + 1]);
    }
    if (nodes < 1 || nodes > 256 || events < 1) {
        fprintf(stderr, "collector_ingest: --nodes 1..256, --events >= 1\n");
        return 2;
    }
    char dir[] = "/tmp/jackdaw-ingest-XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    char *cause = NULL;
    struct cluster cl;
    memset(&cl, 0, sizeof cl);
    cl.key_path = xasprintf("%s/key", dir);
    cl.workdir = xstrdup(dir);
    cl.run_id = xstrdup("ingest");
    cl.start_ns = clock_wall_ns();
    cl.count = (uint32_t)nodes;
    cl.nodes = xcalloc((size_t)nodes, sizeof *cl.nodes);
    for (int i = 0; i < nodes; i++) {
        cl.nodes[i].id = (uint32_t)i;
        snprintf(cl.nodes[i].host, sizeof cl.nodes[i].host, "127.0.0.1");
        cl.nodes[i].port = 1; /* never contacted */
        cl.nodes[i].slots = 8;
        cl.nodes[i].speed = 1;
    }
    struct auth_key key;
    if (auth_key_create(cl.key_path, &key, &cause) < 0) {
        fprintf(stderr, "collector_ingest: %s\n", cause);
        return 2;
    }
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 64) < 0 ||
        getsockname(lfd, (struct sockaddr *)&a, &alen) < 0) {
        perror("collector_ingest: listen");
        return 2;
    }
    snprintf(cl.collector.host, sizeof cl.collector.host, "127.0.0.1");
    cl.collector.port = ntohs(a.sin_port);
    cl.collector.trace_path = xasprintf("%s/ingest.avro", dir);
    char *cluster_path = xasprintf("%s/cluster.json", dir);
    if (cluster_save(&cl, cluster_path, &cause) < 0) {
        fprintf(stderr, "collector_ingest: %s\n", cause);
        return 2;
    }

    struct fake *fakes = xcalloc((size_t)nodes + 1, sizeof *fakes);
    int64_t t0 = clock_mono_ns();
    for (int i = 0; i < nodes; i++) {
        fakes[i].id = (uint32_t)i;
        trace_sync_new(fakes[i].sync);
        make_blocks(&fakes[i], events);
    }
    double encode_s = (double)(clock_mono_ns() - t0) / 1e9;

    char *logpath = xasprintf("%s/collector.log", dir);
    pid_t pid = fork();
    if (pid == 0) {
        int logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (logfd >= 0) {
            dup2(logfd, 1);
            dup2(logfd, 2);
        }
        dup2(lfd, 3);
        execl(jackdaw, jackdaw, "collector", "--cluster", cluster_path, "--listen-fd", "3",
              "--log-level", "warn", (char *)NULL);
        _exit(127);
    }
    close(lfd);

    uv_loop_t loop;
    uv_loop_init(&loop);
    static const struct conn_callbacks cb = {on_ready, on_message, on_close};
    pending_nodes = nodes;
    for (int i = 0; i < nodes; i++) {
        fakes[i].hub = conn_hub_create(&loop, &key, CONN_ROLE_NODE, (uint32_t)i, &cb, &fakes[i]);
        fakes[i].conn = conn_connect(fakes[i].hub, "127.0.0.1", cl.collector.port, NULL, &cause);
    }
    uv_prepare_t prep;
    uv_prepare_init(&loop, &prep);
    prep.data = fakes;
    uv_prepare_start(&prep, on_prepare);
    int64_t deadline = clock_mono_ns() + 120 * 1000000000LL;
    while (pending_nodes > 0 && clock_mono_ns() < deadline) {
        bool any = false;
        for (int i = 0; i < nodes; i++)
            any |= fakes[i].conn != NULL;
        if (!any)
            break;
        uv_run(&loop, UV_RUN_ONCE);
    }
    int64_t total = (int64_t)nodes * events;
    int code = 0;
    if (pending_nodes > 0) {
        fprintf(stderr, "collector_ingest: %d nodes not fully acknowledged (see %s)\n",
                pending_nodes, logpath);
        code = 1;
    } else {
        double s = (double)(t_last - t_first) / 1e9;
        printf("collector ingest: %lld events from %d nodes in %.3f s = %.0f events/s "
               "(blocks pre-encoded in %.2f s)\n",
               (long long)total, nodes, s, (double)total / s, encode_s);
    }
    uv_prepare_stop(&prep);
    uv_close((uv_handle_t *)&prep, NULL);
    for (int i = 0; i < nodes; i++) {
        fakes[i].conn = NULL; /* closing our own connections is not news */
        conn_hub_destroy(fakes[i].hub);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    kill(pid, SIGTERM);
    int st;
    waitpid(pid, &st, 0);

    struct trace_reader *r;
    if (code == 0 && trace_reader_open(&r, cl.collector.trace_path, &cause) == 0) {
        uint64_t records = trace_reader_info(r)->records;
        printf("collector ingest: file holds %llu records (%s); %.2f bytes/event\n",
               (unsigned long long)records, records == (uint64_t)total ? "all" : "MISSING SOME",
               (double)trace_reader_info(r)->file_size / (double)records);
        if (records != (uint64_t)total)
            code = 1;
        trace_reader_destroy(r);
    } else if (code == 0) {
        fprintf(stderr, "collector_ingest: cannot read the trace: %s\n", cause ? cause : "?");
        code = 1;
    }
    for (int i = 0; i < nodes; i++) {
        for (size_t k = 0; k < fakes[i].nblocks; k++)
            free(fakes[i].blocks[k].data);
        free(fakes[i].blocks);
    }
    free(fakes);
    free(logpath);
    free(cluster_path);
    cluster_fini(&cl);
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    return code;
}
